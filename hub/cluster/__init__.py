"""Several hub nodes on one hub database: heartbeats, and the cluster's runs."""
