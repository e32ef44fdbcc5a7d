"""Reading event logs (event-log-v1): finding the files, reading CSV, JSON
Lines and Parquet, typing columns and quarantining rows that break the format."""
