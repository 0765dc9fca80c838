"""Model clients and providers: parameters, replies, errors, caches, batches, budgets."""
