"""What a run reports: the summary, the HTML report, JUnit, model text shown inert."""
