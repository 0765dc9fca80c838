"""Gates and verdicts: the ledger, statistics, baselines, sequential gates, repeats."""
