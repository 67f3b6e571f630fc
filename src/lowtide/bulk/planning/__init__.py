"""Jobs made into a run's requests before anything is sent: checked, priced, split into batches, and the dry runs'
plans."""
