"""Owner-managed secrets: encrypted at rest on the hub database, read by jobs that
declare them (``Secrets:``), and masked wherever a run's output leaves the run."""
