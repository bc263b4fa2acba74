"""Scheduling for the hub: cron expressions and their next fire times."""
