"""WebJobs hub: the engine, the job store and the HTTP API."""
