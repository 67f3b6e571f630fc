Feature: A command's option it cannot use is refused before anything starts, saying what to give instead
  As an operator starting lowtide's servers and reports from a shell or a service file
  I want a timeout of zero, a server with no client key, and a ledger of a newer lowtide refused at once, with exit
  status 2 and the one line that says what is wrong
  So that a service never starts half-configured, and a ledger is never read by a lowtide that cannot understand it

  Background:
    Given the file "actor.yaml" in the scenario's folder holds:
      """
      planner:
        model: claude-sonnet-5-5
      """
    And the environment variable LOWTIDE_SERVE_KEY is not set

  Scenario Outline: <option> is refused before the server starts
    When "lowtide <command>" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "lowtide: <message>"

    Examples:
      | option                       | command                                                             | message                                                                                                   |
      | A body timeout of 0          | serve --actor actor.yaml --client-key k1 --body-timeout 0           | --body-timeout must be more than 0 seconds.                                                               |
      | An idempotency TTL of 0      | serve --actor actor.yaml --client-key k1 --idempotency-ttl 0        | --idempotency-ttl must be more than 0 seconds.                                                            |
      | No client key at all         | serve --actor actor.yaml                                            | lowtide serve needs a key for its clients: give --client-key KEY, --client-key-env VAR or set LOWTIDE_SERVE_KEY. |
      | A webhook tolerance of 0     | webhooks --actor actor.yaml --tolerance 0                           | --tolerance must be more than 0 seconds.                                                                  |
      | A dashboard refresh of 0     | dashboard --refresh 0                                               | --refresh must be more than 0 seconds.                                                                    |

  Scenario: A ledger of a newer lowtide is refused by a report that only reads it, and left as it was
    Given the SQLite file "newer.sqlite3" in the scenario's folder has the schema version 999
    When "lowtide spend --ledger newer.sqlite3" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "lowtide: The ledger has schema version 999, newer than this lowtide understands"
    And the command printed on stderr "upgrade lowtide."
    And the SQLite file "newer.sqlite3" still has the schema version 999
