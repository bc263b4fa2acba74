"""Running a job from the console: the run dialog, its console and result views, and
the per-job parameters dialog."""
