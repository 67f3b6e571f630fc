"""Mistral's API as an emulation: Models, Chat Completions (whole and streamed), Files and Batch jobs."""
