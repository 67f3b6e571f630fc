Feature: Cache-aware batches: one primer writes a shared prompt to the cache, the rest of the run reads it
  As a developer sending thousands of requests that share a long system prompt
  I want lowtide to send one of them first, marked to be cached for an hour, and the rest once it is answered
  So that the shared prompt is paid for once at the cache's write price and read at a tenth of it, not paid whole
  (or written again) by every request of a batch, whose requests are processed side by side

  Background:
    Given an emulated Anthropic API whose batches take 60 seconds

  Scenario: One primer per shared prompt is answered before the rest are sent, and the rest read what it wrote
    Given an actor "reader" whose system prompt is 6000 characters long, with:
      """
      batch_processing: batch
      max_tokens: 64
      batch: {poll_interval: 10, max_attempts: 1}
      """
    And 10 prompts "Review {n}"
    When the actor maps the prompts with 100 items per batch
    Then every one of the 10 results succeeded
    And the API received 2 batches of 1 and 9 requests
    And the batch of 1 request had ended before the other was created
    And result 0 wrote 1500 tokens to the prompt cache for an hour and read none
    And results 1 to 9 each read 1500 tokens from the prompt cache and wrote none
    And the summary of the run says "prompt cache: 1,350 token(s) read and 150 written per answer, saving $"
    And the saving the summary names is what the cached tokens would have cost uncached, less what they cost

  Scenario: The dry run shows the primer and the saving it is expected to bring
    Given an actor "reader" whose system prompt is 6000 characters long, with:
      """
      batch_processing: batch
      max_tokens: 64
      """
    And 10 prompts "Review {n}"
    When the actor plans the prompts
    Then the plan says "prompt cache: 1 primer, then 9 request(s) reading its 1,500-token prefix"
    And the plan's expected saving is 10 uncached reads of 1500 tokens less one write and 9 reads, at batch prices

  Scenario: Requests of two different prompts get a primer each, sent together in a batch of their own
    Given an actor "reader" whose system prompt is 6000 characters long, with:
      """
      batch_processing: batch
      max_tokens: 64
      batch: {poll_interval: 10, max_attempts: 1}
      """
    And the prompts "Review {n}", 10 of them, the last 5 with a system prompt of their own, 8000 characters long
    When the actor maps the prompts with 100 items per batch
    Then every one of the 10 results succeeded
    And the API received 2 batches of 2 and 8 requests
    And the batch of 2 requests had ended before the other was created
    And results 0 and 5 each wrote to the prompt cache and read none
    And results 1 to 4 each read 1500 tokens from the prompt cache and wrote none
    And results 6 to 9 each read 2000 tokens from the prompt cache and wrote none

  Scenario: A document every job sends first is the prefix primed when the system prompt is too short alone
    Given an actor "reader" whose system prompt is 400 characters long, with:
      """
      batch_processing: batch
      max_tokens: 64
      batch: {poll_interval: 10, max_attempts: 1}
      """
    And a text file "tides.txt" of 6000 characters
    And jobs that each send the file "tides.txt" before their prompt "Question {n}", 5 of them
    When the actor maps the prompts with 100 items per batch
    Then every one of the 5 results succeeded
    And the API received 2 batches of 1 and 4 requests
    And results 1 to 4 each read from the prompt cache what result 0 wrote

  Scenario: A prompt too short for the model to cache is sent as it is, in one batch, with no marker
    Given an actor "reader" whose system prompt is 2000 characters long, with:
      """
      batch_processing: batch
      max_tokens: 64
      batch: {poll_interval: 10, max_attempts: 1}
      """
    And 10 prompts "Review {n}"
    When the actor plans the prompts
    Then the plan says "prompt cache: 10 request(s) with no prefix long enough to cache, sent as they are"
    When the actor maps the prompts with 100 items per batch
    Then the API received 1 batch of 10 requests
    And no request the API received carried a cache marker
    And no result read from the prompt cache or wrote to it

  Scenario: Too few requests share a prompt for a primer to pay: they are sent as they are
    Given an actor "reader" whose system prompt is 6000 characters long, with:
      """
      batch_processing: batch
      max_tokens: 64
      batch: {poll_interval: 10, max_attempts: 1}
      """
    And 2 prompts "Review {n}"
    When the actor plans the prompts
    Then the plan says "prompt cache: 2 request(s) share too little for a primer to pay, sent as they are"
    When the actor maps the prompts with 100 items per batch
    Then the API received 1 batch of 2 requests
    And no request the API received carried a cache marker

  Scenario: Turned off, no primer is sent; a batch marked by hand writes the prompt once per request, side by side
    Given an actor "reader" whose system prompt is 6000 characters long, with:
      """
      batch_processing: batch
      max_tokens: 64
      cache_control: {type: ephemeral, ttl: 1h}
      batch: {poll_interval: 10, max_attempts: 1, cache_primers: false}
      """
    And 10 prompts "Review {n}"
    When the actor plans the prompts
    Then the plan says "prompt cache: no primer (turned off: batch.cache_primers is false)"
    When the actor maps the prompts with 100 items per batch
    Then the API received 1 batch of 10 requests
    And results 0 to 9 each wrote to the prompt cache and read none

  Scenario: A run resumed after the cache expired primes it again before the rest are sent
    Given an actor "reader" whose system prompt is 6000 characters long, with:
      """
      batch_processing: batch
      max_tokens: 64
      batch: {poll_interval: 10, max_attempts: 1}
      """
    And the prompts "Review {n}", 10 of them, with prompts 3, 6 and 8 errored in their first batch
    When the actor maps the prompts with 100 items per batch as run "reviews"
    Then the API received 2 batches of 1 and 9 requests
    When 2 hours pass on the emulator's clock
    And the run "reviews" is retried
    Then every one of the 10 results succeeded
    And the API received 4 batches of 1, 9, 1 and 2 requests
    And result 3 wrote 1500 tokens to the prompt cache for an hour and read none
    And results 6 and 8 each read 1500 tokens from the prompt cache and wrote none

  Scenario: OpenAI: the requests sharing a long instruction are sent together under one prompt_cache_key, no primer
    Given an emulated OpenAI API
    And an OpenAI actor "tides" whose instructions are 6000 characters long, with:
      """
      batch_processing: batch
      max_tokens: 64
      batch: {poll_interval: 30}
      """
    And the prompts "Review {n}", 6 of them, the last 3 with a system prompt of their own, 8000 characters long
    When the actor plans the prompts
    Then the plan says "prompt cache: 3 request(s) sharing a 1,5"
    When the actor maps the prompts with 100 items per batch
    Then every one of the 6 results succeeded
    And the OpenAI API received one batch, whose requests carry 2 prompt_cache_keys, one for each instruction
