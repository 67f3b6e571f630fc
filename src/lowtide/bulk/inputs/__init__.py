"""A bulk run's inputs: JSONL and CSV read, each line parsed and checked in one place (`parser`), into `Job`s that name
their files, never hold them."""
