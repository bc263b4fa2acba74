"""What the hub and the console both speak: error codes, NDJSON lines, the job header."""
