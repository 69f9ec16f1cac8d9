"""An in-house SQS-like queue on PostgreSQL 15, built from the documents alone (README.md)."""
