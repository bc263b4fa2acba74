"""Widgets and helpers of the History, Scheduler and Metrics pages."""
