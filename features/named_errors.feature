Feature: Errors name their cause, and the command exits as documented
  As a developer whose setup is wrong in some small way (a typo in a base URL, a key pasted with its newline, an API
  or emulator not running)
  I want to be told at once what is wrong and where it came from, with the exit status the README documents
  So that I fix my setup in seconds, instead of waiting half a minute for "Could not reach the API" and exit 1

  Background:
    Given an emulated Anthropic API whose batches take 60 seconds

  Scenario Outline: A base URL that no client can call is a ConfigurationError naming base_url, before anything is recorded
    Given an actor "planner" in batch mode that builds its own client, with "ANTHROPIC_BASE_URL" set to "<url>"
    When the actor is asked "Plan it"
    Then a ConfigurationError naming "base_url" is raised, saying "<message>"
    And the ledger holds no request

    Examples:
      | url                  | message                                                                                          |
      | htp://api.example    | base_url (from $ANTHROPIC_BASE_URL) 'htp://api.example' is not an http:// or https:// URL (its scheme is 'htp') |
      | http//api.example    | 'http//api.example' is not an http:// or https:// URL (it has no scheme)                          |
      | http://api example   | 'http://api example' holds a space; a URL holds none                                              |
      | http://              | 'http://' has no host                                                                              |
      | http://h:99999       | has a port that is not a number from 0 to 65535                                                    |
      | https://u:pw@h/a b   | 'https://u:***@h/a b' holds a space                                                                |
      | https://h/a\u00a0b   | holds whitespace; a URL holds none (percent-encode it, as %20 for a space)                        |
      | https://h/a\x07b     | holds a control character (U+0007); a URL holds none                                              |

  Scenario Outline: An API key holding <what> is a ConfigurationError naming api_key, which never shows the key
    Given an actor "planner" in batch mode that builds its own client, with "ANTHROPIC_API_KEY" set to "<key>"
    When the actor is asked "Plan it"
    Then a ConfigurationError naming "api_key" is raised, saying "The API key (from $ANTHROPIC_API_KEY) holds <what>"
    And the error message does not hold "sk-ant-secret"
    And the ledger holds no request

    Examples:
      | what                               | key                |
      | a newline at its end               | sk-ant-secret\n    |
      | a tab inside it                    | sk-ant\tsecret     |
      | a character beyond ASCII inside it | sk-ant\u00e9secret |

  Scenario: An API key given in code is checked the same way
    Given an actor "planner" in batch mode given the API key " sk-ant-secret"
    When the actor is asked "Plan it"
    Then a ConfigurationError naming "api_key" is raised, saying "The API key (from the api_key argument) holds a space at its start"
    And the error message does not hold "sk-ant-secret"

  Scenario Outline: An OpenAI actor is checked the same way: <what>
    Given an OpenAI actor "scout" in batch mode that builds its own client, with "<variable>" set to "<value>"
    When the actor is asked "Is the harbour open?"
    Then a ConfigurationError naming "<field>" is raised, saying "<message>"
    And the error message does not hold "sk-openai-secret"
    And the ledger holds no request

    Examples:
      | what                            | variable        | value                  | field    | message                                                                           |
      | a base URL with no scheme       | OPENAI_BASE_URL | api.openai.example/v1  | base_url | base_url (from $OPENAI_BASE_URL) 'api.openai.example/v1' is not an http:// or https:// URL (it has no scheme) |
      | an empty base URL               | OPENAI_BASE_URL |                        | base_url | base_url (from $OPENAI_BASE_URL) is empty                                         |
      | a key ending in a newline       | OPENAI_API_KEY  | sk-openai-secret\n     | api_key  | The API key (from $OPENAI_API_KEY) holds a newline at its end                     |

  Scenario Outline: An OpenAI API whose connections are refused is an APIUnreachableError too, in <mode> mode
    Given an OpenAI actor "scout" in <mode> mode whose API refuses connections
    When the actor is asked "Is the harbour open?"
    Then the call fails with APIUnreachableError
    And the error message is:
      """
      could not connect to openai.invalid:80 (connection refused)
      """

    Examples:
      | mode  |
      | live  |
      | batch |

  Scenario: A bulk run whose API refuses connections sends nothing more after the first batch, and loses nothing
    The first batch's create is tried four times in 3.5 seconds, then its items fail naming host, port and reason;
    the others are not sent (each would fail the same way) and say why. None is recorded as failed in the ledger:
    mapped again once the API answers, the same run sends them all.

    Given an Anthropic API whose connections are refused
    And an actor "offline" in batch mode
    When the actor maps 6 prompts, 2 to a batch and one batch at a time
    Then items 0 and 1 failed with APIUnreachableError saying "could not connect to emulator.invalid:80 (connection refused)"
    And the other 4 items were not run, each saying "not sent: could not connect to emulator.invalid:80 (connection refused)"
    And "POST /v1/messages/batches" was tried 4 times, 0.5, 1 and 2 seconds apart on the clock
    And the ledger holds no request that failed
    When the same prompts are mapped again through the emulator
    Then this time all 6 items succeeded

  Scenario: lowtide collect through an API that refuses connections raises, and leaves the batch to a later collect
    Given an actor "planner" in batch mode
    And a program submitted the call "plan-42" through the emulator and ended, its batch still running
    When lowtide collects the ledger through an API whose connections are refused
    Then the call fails with APIUnreachableError
    And the request "plan-42" is waiting-on-batch in the ledger
    When lowtide collects the ledger through the emulator, once its batch has ended
    Then the request "plan-42" is succeeded in the ledger
