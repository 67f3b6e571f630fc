Feature: A cancellation a library loses is still obeyed
  As a developer closing an actor, or a program ending its tasks, while batches are polled and the ledger is written
  I want every task lowtide runs to stop when it is cancelled, even when a library it awaits loses the cancellation
  So that closing an actor returns at once, instead of when its batches end a day later

  On Python 3.11, `asyncio.wait_for` returns its inner result when its task is cancelled in the same moment as that
  result arrives, and the task goes on as if never asked to stop: psycopg_pool waits for a connection that way.

  Scenario: An actor closed while a look at its batch loses the cancellation closes, and looks at the batch no more
    Given a batch actor whose API client loses the cancellation of the batch look it is waiting on
    When the actor is asked "Plan the cron move" and its batch has been looked at while it runs
    And the actor is closed while its poller waits on a look at the batch
    Then the actor is closed within 10 seconds
    And the batch was not looked at after the look that lost the cancellation
    And the ledger still holds the call's batch, for a later collect

  @postgres
  Scenario: A task cancelled as the ledger's connection pool hands it a connection is told, at every moment of it
    Given the scenario's PostgreSQL ledger's connection pool, of one connection
    When a task waits for that connection while another holds it, and is cancelled 0 to 5 loop steps after it is given back, for each of 0 to 5 steps of waiting first
    Then each cancelled task ended cancelled, none of them went on to use the connection
    And the pool still hands out its connection
