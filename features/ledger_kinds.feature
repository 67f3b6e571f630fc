Feature: Kinds of ledger, chosen by the scheme of a ledger's location
  As a developer who keeps lowtide's ledger in a store of my own choosing
  I want each kind of store chosen by the scheme of its location through one registry, and a store of another
  package plugged in through the `lowtide.ledgers` entry points, as the built-in ones are
  So that a new kind of store is a folder and an entry point, and every place a ledger is named knows it

  Scenario: The built-in stores are registered through the installed entry points, each under its schemes
    Given the installed package declares the ledger entry point "sqlite = lowtide.ledger.sqlite.kind:register"
    And the installed package declares the ledger entry point "postgresql = lowtide.ledger.postgres.kind:register"
    And the installed package declares the ledger entry point "memory = lowtide.ledger.memory.kind:register"
    When the installed ledger kinds are loaded into an empty ledger registry
    Then the ledger kinds are "sqlite, postgresql, memory"
    And these locations are read as:
      | location                             | kind       | shown                               |
      | ledger.sqlite3                       | sqlite     | ledger.sqlite3                      |
      | sqlite:relative/ledger.sqlite3       | sqlite     | relative/ledger.sqlite3             |
      | sqlite:///srv/lowtide/ledger.sqlite3 | sqlite     | /srv/lowtide/ledger.sqlite3         |
      | postgresql://lowtide:pw@db/lowtide   | postgresql | postgresql://lowtide:***@db/lowtide |
      | POSTGRES://lowtide:pw@db/lowtide     | postgresql | POSTGRES://lowtide:***@db/lowtide   |
      | memory:                              | memory     | memory:                             |
      | postgresql://lowtide:pw@db/lowtide?sslmode=require&lowtide_outage_seconds=300 | postgresql | postgresql://lowtide:***@db/lowtide?sslmode=require&lowtide_outage_seconds=300 |
    And the location "postgresql://lowtide:pw@db/lowtide?lowtide_outage_seconds=a%20minute" is refused: "ledger 'postgresql://lowtide:***@db/lowtide?lowtide_outage_seconds=a%20minute' sets lowtide_outage_seconds to 'a minute': write a number of seconds, 0 or more (0: an outage is not waited out)."

  Scenario: A store of another package plugs in through its entry point, and an actor keeps its ledger there
    Given an emulated Anthropic API whose batches take 120 seconds
    And a ledger registry with the installed kinds
    When the ledger entry point "scratch = lowtide_scratch_ledger:register" is loaded into it
    Then the ledger kinds are "sqlite, postgresql, memory, scratch"
    And these locations are read as:
      | location      | kind    | shown         |
      | scratch:notes | scratch | scratch:notes |
    And the location "scratch:" is refused: "ledger 'scratch:' names no scratch ledger: write scratch:NAME."
    And the location "mysql://u:secret@db/x" is refused: "ledger 'mysql://u:***@db/x' names no kind of ledger lowtide has (mysql:); use a SQLite file (a path, sqlite:///absolute/path or sqlite:relative/path), postgresql://user@host/database, memory: (this process only) or scratch:NAME (a named ledger in this process) (./name for a file whose name holds a colon)."
    When an actor "planner" keeps its ledger at "scratch:notes", with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_attempts: 1}
      """
    And the actor is asked "Plan the cron move" with the key "cron"
    Then the answer is the emulated reply to "Plan the cron move"
    And the ledger holds these requests:
      | key  | state     | attempts | cost     |
      | cron | succeeded | 1        | recorded |
    And the ledger at "scratch:notes" is the actor's, opened once in this process

  Scenario: A store another package installs is one lowtide's commands read and refuse, as they do the built-in ones
    Given an emulated Anthropic API whose batches take 120 seconds
    And the package "lowtide-shelf" is installed for a new process, declaring the ledger entry point "shelf = lowtide_shelf_ledger:register"
    And the ledger shelf is the scenario's folder "shelf"
    And a ledger registry with the installed kinds
    When the ledger entry point "shelf = lowtide_shelf_ledger:register" is loaded into it
    And an actor "planner" keeps its ledger at "shelf:notes", with:
      """
      batch_processing: batch
      batch: {poll_interval: 30, max_attempts: 1}
      """
    And the actor is asked "Plan the cron move" with the key "cron"
    And "lowtide status --ledger shelf:notes" runs in a new process with that package installed
    Then the command exits with 0
    And the command printed "cron"
    And the command printed "succeeded"
    When "lowtide status --ledger shelf:drafts" runs in a new process with that package installed
    Then the command exits with 2
    And the command printed on stderr "lowtide: There is no ledger at shelf:drafts. Name the one your programs use with --ledger or $LOWTIDE_LEDGER."
    When "lowtide runs --ledger shelf:Notes" runs in a new process with that package installed
    Then the command exits with 2
    And the command printed on stderr "'shelf:Notes' names no ledger on the shelf: write shelf:NAME (lower-case letters, digits, dashes)."
    When "lowtide status --ledger mysql://db/x" runs in a new process with that package installed
    Then the command exits with 2
    And the command printed on stderr "use a SQLite file (a path, sqlite:///absolute/path or sqlite:relative/path), postgresql://user@host/database, shelf:NAME (a ledger on the shelf $LOWTIDE_SHELF) or memory: (this process only)"
    When "lowtide status --ledger shelf:notes" runs in a new process without that package
    Then the command exits with 2
    And the command printed on stderr "'shelf:notes' names no kind of ledger lowtide has (shelf:)"

  Scenario: An error of a store another package installs, one its kind knows, is one line it says, not a traceback
    # The shelf's store raises an error of its own (not lowtide's LedgerError) when its ledger was taken off the
    # shelf; its kind's `failure` says what it means, and the command ends with it, as with a usage error.
    Given the package "lowtide-shelf" is installed for a new process, declaring the ledger entry point "shelf = lowtide_shelf_ledger:register"
    And the ledger shelf is the scenario's folder "shelf"
    And a SQLite ledger file "shelf/notes.ledger" holding a request
    And the shelf's ledger "notes" was taken off it by "ops@example.com"
    When "lowtide status --ledger shelf:notes" runs in a new process with that package installed
    Then the command exits with 2
    And the command printed on stderr "lowtide: The ledger shelf:notes was taken off the shelf by ops@example.com; ask them to put it back."
    And the command printed nothing on stderr that looks like a traceback

  Scenario: A scheme another kind has is refused, unless the new kind replaces it; a scheme of one letter is a drive
    Given a ledger registry with the installed kinds
    When a kind of ledger is registered for the scheme "postgres"
    Then a ConfigurationError is raised
    And the error message is:
      """
      A kind of ledger is already registered for the scheme 'postgres'; pass replace=True to override it.
      """
    When a kind of ledger is registered for the scheme "c"
    Then a ConfigurationError is raised
    And the error message contains "A kind of ledger cannot be named 'c': a scheme is two characters or more"
    When a kind of ledger is registered for the scheme "postgres" with replace=True
    Then these locations are read as:
      | location                  | kind       | shown                     |
      | postgres://db/lowtide     | postgres   | postgres://db/lowtide     |
      | postgresql://db/lowtide   | postgresql | postgresql://db/lowtide   |

  Scenario: A store plugin that cannot be loaded is named, not skipped
    Given an empty ledger registry
    When the ledger entry point "broken = lowtide_broken_plugin:register" is loaded into it
    Then a ConfigurationError is raised
    And the error message contains "Ledger plugin 'broken' (lowtide_broken_plugin:register) failed to load: ModuleNotFoundError"

  Scenario: A store of one's own is another connection to the ledger the process shares, which waits for none of its uses
    Given a SQLite ledger file "shared.sqlite3" holding a request
    When the process's store and a store of its own are opened for "shared.sqlite3"
    Then they are two stores over one ledger, each reading the request
    And the process's store is the one opened again for "shared.sqlite3"
    And the store of its own reads while the process's store holds a transaction open
    And closing the store of its own leaves the process's store reading
