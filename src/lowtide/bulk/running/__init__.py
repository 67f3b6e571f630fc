"""One go at a bulk run: `BulkRun`, what it is given, and the batch and live executions that send, wait and keep
its limits."""
