Feature: Actor configuration
  As a developer configuring the actors of an agent
  I want actor settings loaded from a dict, a YAML file or a TOML file, with shared defaults
  So that a typo or an impossible setting fails at load time with a message naming the field, and never leaks a key

  Scenario: One actor from a dict
    When the actors are loaded from the dict:
      """
      {"name": "writer", "model": "claude-sonnet-5-5", "batch_processing": "batch", "batch": {"poll_interval": 5}}
      """
    Then the actors loaded are "writer"
    And the loaded actors have these settings:
      | name   | provider  | model             | batch_processing | batch.poll_interval | batch.max_wait | batch.on_timeout | max_tokens | fallback_to_live |
      | writer | anthropic | claude-sonnet-5-5 | batch            | 5.0                 | 87000.0        | cancel           | 1024       | False            |

  Scenario: One actor from a YAML file, loaded by Actor.from_file without naming it
    Given a file "writer.yaml" containing:
      """
      name: writer
      model: claude-haiku-4-5
      system_prompt: You write release notes.
      temperature: 0.3
      stop_sequences: ["###"]
      """
    When an Actor is created from "writer.yaml"
    Then the actor is called "writer" and has these settings:
      | model            | system_prompt            | temperature | stop_sequences | batch_processing |
      | claude-haiku-4-5 | You write release notes. | 0.3         | ['###']        | live             |

  Scenario: Several actors in a YAML file, as a mapping, share deep-merged defaults
    Given a file "team.yaml" containing:
      """
      defaults:
        model: claude-sonnet-5-5
        batch_processing: batch
        max_tokens: 800
        batch:
          poll_interval: 15
          max_wait: 3600
          on_timeout: leave
      actors:
        planner:
          system_prompt: You plan.
        reviewer:
          model: claude-opus-4-5
          batch:
            max_wait: 600
        chatter:
          batch_processing: live
          max_tokens: 200
      """
    When the actors are loaded from "team.yaml"
    Then the actors loaded are "planner, reviewer, chatter"
    And the loaded actors have these settings:
      | name     | model             | batch_processing | max_tokens | batch.poll_interval | batch.max_wait | batch.on_timeout | system_prompt |
      | planner  | claude-sonnet-5-5 | batch            | 800        | 15.0                | 3600.0         | leave            | You plan.     |
      | reviewer | claude-opus-4-5   | batch            | 800        | 15.0                | 600.0          | leave            |               |
      | chatter  | claude-sonnet-5-5 | live             | 200        | 15.0                | 3600.0         | leave            |               |

  Scenario: Several actors in a TOML file, as a list, share deep-merged defaults
    Given a file "team.toml" containing:
      """
      [defaults]
      model = "claude-sonnet-5-5"
      batch_processing = "batch"

      [defaults.batch]
      poll_interval = 10.0
      max_wait = 7200.0

      [[actors]]
      name = "planner"

      [[actors]]
      name = "reviewer"
      fallback_to_live = true

      [actors.batch]
      max_wait = 900.0
      api_retries = 1
      """
    When the actors are loaded from "team.toml"
    Then the actors loaded are "planner, reviewer"
    And the loaded actors have these settings:
      | name     | model             | batch_processing | batch.poll_interval | batch.max_wait | batch.api_retries | fallback_to_live |
      | planner  | claude-sonnet-5-5 | batch            | 10.0                | 7200.0         | 5                 | False            |
      | reviewer | claude-sonnet-5-5 | batch            | 10.0                | 900.0          | 1                 | True             |

  Scenario: Several actors in a dict, as a mapping
    When the actors are loaded from the dict:
      """
      {"defaults": {"model": "claude-haiku-4-5"}, "actors": {"a": {}, "b": {"model": "claude-sonnet-5-5"}}}
      """
    Then the loaded actors have these settings:
      | name | model             |
      | a    | claude-haiku-4-5  |
      | b    | claude-sonnet-5-5 |

  Scenario: One actor of several is picked by name
    Given a file "team.yml" containing:
      """
      actors:
        - {name: planner, model: claude-sonnet-5-5}
        - {name: reviewer, model: claude-haiku-4-5}
      """
    When actor "reviewer" is loaded from "team.yml"
    Then the configuration loaded is "reviewer" with model "claude-haiku-4-5"
    When an Actor is created from "team.yml" with the name "planner"
    Then the actor is called "planner" and has these settings:
      | model             |
      | claude-sonnet-5-5 |

  Scenario: A file of several actors needs a name to pick one
    Given a file "team.yaml" containing:
      """
      actors:
        planner: {model: claude-sonnet-5-5}
        reviewer: {model: claude-haiku-4-5}
      """
    When the only actor is loaded from "team.yaml"
    Then a ConfigurationError is raised
    And the error message contains "team.yaml holds 2 actors (planner, reviewer); say which one, as in name='planner'."
    And the error names the field "name"

  Scenario: Picking an actor the file does not hold lists those it does
    Given a file "team.yaml" containing:
      """
      actors:
        reviewer: {model: claude-haiku-4-5}
        planner: {model: claude-sonnet-5-5}
      """
    When actor "writer" is loaded from "team.yaml"
    Then a ConfigurationError is raised
    And the error message contains "team.yaml has no actor named 'writer'. It has planner, reviewer."
    And the error names the field "name"

  Scenario: A misspelt actor name gets the name it most likely meant
    Given a file "team.yaml" containing:
      """
      actors:
        reviewer: {model: claude-haiku-4-5}
        planner: {model: claude-sonnet-5-5}
      """
    When actor "planer" is loaded from "team.yaml"
    Then a ConfigurationError is raised
    And the error message contains "team.yaml has no actor named 'planer'. Did you mean 'planner'? It has planner, reviewer."

  Scenario Outline: An invalid setting fails at load time, naming the actor, the file and the field
    Given a file "actors.yaml" containing the actor "writer" with "<setting>"
    When the actors are loaded from "actors.yaml"
    Then a ConfigurationError is raised
    And the error message contains "Invalid configuration for actor 'writer' in "
    And the error message contains "actors.yaml"
    And the error message contains "<message>"
    And the error names the field "<field>"

    Examples:
      | setting                                                            | field               | message                                                                    |
      | batch: {poll_interval: -5}                                         | batch.poll_interval | batch.poll_interval: Input should be greater than 0 (got -5)               |
      | batch: {max_wait: 0}                                               | batch.max_wait      | batch.max_wait: Input should be greater than 0 (got 0)                     |
      | batch: {on_timeout: abandon}                                       | batch.on_timeout    | batch.on_timeout: Input should be 'cancel' or 'leave' (got 'abandon')      |
      | batch: {api_retries: 99}                                           | batch.api_retries   | batch.api_retries: Input should be less than or equal to 50 (got 99)       |
      | batch: {poll_intervall: 5}                                           | batch.poll_intervall | batch.poll_intervall: not a known setting; did you mean 'poll_interval'?   |
      | colour: blue                                                       | colour              | colour: not a known setting (known here: api_key_env, base_url, batch,    |
      | batch_processing: sometimes                                        | batch_processing    | batch_processing: Input should be 'live' or 'batch' (got 'sometimes')      |
      | temperature: 1.5                                                   | temperature         | temperature: 1.5 is outside the range the Messages API takes, 0 to 1.      |
      | top_p: 1.5                                                         | top_p               | top_p: 1.5 is outside the range the Messages API takes, 0 to 1.            |
      | live: {retries: {oops: 1}}                                         | live                | live: retries: unknown error class(es) oops; use rate_limited, overloaded, server, connection, timeout |
      | live: {max_concurency: 3}                                          | live.max_concurency | live.max_concurency: not a known setting; did you mean 'max_concurrency'?  |
      | live: {rpm: 0}                                                     | live.rpm            | live.rpm: Input should be greater than or equal to 1 (got 0)               |
      | live: {deadline: -5}                                               | live.deadline       | live.deadline: Input should be greater than 0 (got -5)                     |
      | max_tokens: 0                                                      | max_tokens          | max_tokens: Input should be greater than or equal to 1                     |
      | timeout: -1                                                        | timeout             | timeout: Input should be greater than 0 (got -1)                           |
      | stop_sequences: ["END", ""]                                        | stop_sequences.1    | stop_sequences.1: the stop sequence is empty; the Messages API wants each to hold something besides whitespace. |
      | {max_tokens: 2000, thinking: {type: enabled, budget_tokens: 4000}} | thinking.budget_tokens | thinking.budget_tokens (4000) must be less than max_tokens (2000)      |
      | {max_tokens: 2000, thinking: {type: enabled, budget_tokens: 2000}} | thinking.budget_tokens | thinking.budget_tokens (2000) must be less than max_tokens (2000)      |
      | thinking: {type: enabled, budget_tokens: 512}                      | thinking.budget_tokens | thinking.budget_tokens must be an integer of at least 1024           |

  Scenario: A missing required setting is named
    Given a file "actors.yaml" containing:
      """
      name: writer
      system_prompt: You write.
      """
    When the actors are loaded from "actors.yaml"
    Then a ConfigurationError is raised
    And the error message contains "model: Field required"
    And the error names the field "model"

  Scenario: An actor name that could not be used as an identifier is refused
    When the actors are loaded from the dict:
      """
      {"name": "my writer!", "model": "claude-sonnet-5-5"}
      """
    Then a ConfigurationError is raised
    And the error message contains "Invalid configuration for actor 'my writer!' in configuration"
    And the error names the field "name"

  Scenario: Every problem of an actor is listed, not only the first
    When the actors are loaded from the dict:
      """
      {"name": "writer", "model": "claude-sonnet-5-5", "temperature": 3, "max_tokens": -1, "batch": {"poll_interval": 0}}
      """
    Then a ConfigurationError is raised
    And the error message contains "temperature: 3 is outside the range the Messages API takes, 0 to 1."
    And the error message contains "max_tokens: Input should be greater than or equal to 1"
    And the error message contains "batch.poll_interval: Input should be greater than 0"

  Scenario Outline: A key pasted into the wrong place never appears in the error
    When the actors are loaded from the dict:
      """
      <settings>
      """
    Then a ConfigurationError is raised
    And the error message contains "<field>"
    And the error message does not contain "sk-ant-api03-secret"

    Examples:
      | settings                                                                                                       | field                                   |
      | {"name": "writer", "model": "claude-sonnet-5-5", "api_key": "sk-ant-api03-secret"}                             | api_key: not a known setting; did you mean 'api_key_env'? |
      | {"name": "writer", "model": "claude-sonnet-5-5", "batch": {"api_key": "sk-ant-api03-secret"}}                  | batch.api_key                           |
      | {"name": "writer", "model": "claude-sonnet-5-5", "api_key_env": 12, "max_tokens": "sk-ant-api03-secret"}       | max_tokens                              |
      | {"name": "writer", "model": "claude-sonnet-5-5", "auth_token": ["sk-ant-api03-secret"]}                        | auth_token                              |
      | {"defaults": {"api_key": "sk-ant-api03-secret"}, "actors": [{"name": "writer", "model": "claude-sonnet-5-5"}]} | api_key                                 |
      | {"api_key": "sk-ant-api03-secret", "actors": [{"name": "writer", "model": "claude-sonnet-5-5"}]}               | unknown top-level key(s) api_key        |
      | {"name": "writer", "model": "claude-sonnet-5-5", "metadata": {"user_id": "sk-ant-api03-secret"}, "stop_sequences": [""]} | stop_sequences.0: the stop sequence is empty |

  Scenario: A key pasted into api_key_env, which names an environment variable, is refused without being echoed
    When the actors are loaded from the dict:
      """
      {"name": "writer", "model": "claude-sonnet-5-5", "api_key_env": "sk-ant-api03-secret"}
      """
    Then a ConfigurationError is raised
    And the error names the field "api_key_env"
    And the error message does not contain "sk-ant-api03-secret"

  Scenario: The same actor name twice in one file is refused
    Given a file "team.yaml" containing:
      """
      defaults: {model: claude-sonnet-5-5}
      actors:
        - name: planner
        - name: reviewer
        - name: planner
          max_tokens: 50
      """
    When the actors are loaded from "team.yaml"
    Then a ConfigurationError is raised
    And the error message contains "team.yaml: actor 'planner' is defined twice"
    And the error names the field "name"

  Scenario Outline: A file whose layout is wrong says what it expected
    Given a file "team.yaml" containing:
      """
      <document>
      """
    When the actors are loaded from "team.yaml"
    Then a ConfigurationError is raised
    And the error message contains "<message>"
    And the error names the field "<field>"

    Examples:
      | document                                                | field    | message                                                         |
      | {actors: {planner: {model: claude-haiku-4-5}}, team: x} | team     | unknown top-level key(s) team; expected 'actors' and 'defaults' |
      | {actors: 5}                                             | actors   | 'actors' must be a list or a mapping of actors                  |
      | {actors: []}                                            | actors   | 'actors' is empty                                               |
      | {actors: {}}                                            | actors   | 'actors' is empty                                               |
      | {actors: [planner]}                                     | actors   | actors[0] must be a mapping of settings                         |
      | {actors: {planner: claude-haiku-4-5}}                   | planner  | actor 'planner' must be a mapping of settings                   |
      | {defaults: [1, 2], actors: {planner: {}}}               | defaults | 'defaults' must be a mapping                                    |

  Scenario Outline: A file that cannot be read or parsed is refused with the reason
    Given a file "<file>" containing:
      """
      <content>
      """
    When the actors are loaded from "<file>"
    Then a ConfigurationError is raised
    And the error message contains "<message>"

    Examples:
      | file        | content            | message                                                        |
      | actors.json | {"name": "writer"} | unknown configuration format '.json'; use .yaml, .yml or .toml |
      | actors.yaml | name: [writer      | actors.yaml is not valid YAML                                  |
      | actors.toml | name = "writer     | actors.toml is not valid TOML                                  |
      | actors.yaml | - just a list      | actors.yaml holds a list at its top level; an actor file holds one actor's settings |
      | actors.yaml | # only a comment   | actors.yaml is empty; an actor file holds one actor's settings |

  Scenario: A missing file is named in the error
    When the actors are loaded from "nowhere.yaml"
    Then a ConfigurationError is raised
    And the error message contains "Cannot read configuration file"
    And the error message contains "nowhere.yaml: No such file or directory"

  Scenario: A malformed YAML file does not echo a key it holds
    Given a file "actors.yaml" containing:
      """
      name: writer
      model: claude-sonnet-5-5
        api_key: sk-ant-api03-secret
      """
    When the actors are loaded from "actors.yaml"
    Then a ConfigurationError is raised
    And the error message contains "actors.yaml is not valid YAML"
    And the error message contains "line 3"
    And the error message does not contain "sk-ant-api03-secret"

  Scenario: A file that is not UTF-8 text is refused as a configuration error
    Given a file "actors.yaml" holding the Latin-1 bytes of:
      """
      name: writer
      model: claude-sonnet-5-5
      system_prompt: Réponds en français.
      """
    When the actors are loaded from "actors.yaml"
    Then a ConfigurationError is raised
    And the error message contains "actors.yaml"

  Scenario: LOWTIDE_POLL_INTERVAL replaces every actor's poll interval, so examples run against the emulator unedited
    Given the environment variable "LOWTIDE_POLL_INTERVAL" is "0.2"
    And a file "actors.yaml" containing:
      """
      defaults:
        batch: {poll_interval: 60}
      actors:
        planner: {model: claude-sonnet-5-5}
        writer: {model: claude-haiku-4-5}
      """
    When the actors are loaded from "actors.yaml"
    Then the loaded actors have these settings:
      | name    | batch.poll_interval |
      | planner | 0.2                 |
      | writer  | 0.2                 |

  Scenario: An actor file's poll interval out of range fails as it loads even when LOWTIDE_POLL_INTERVAL replaces it
    Given the environment variable "LOWTIDE_POLL_INTERVAL" is "0.2"
    And a file "actors.yaml" containing:
      """
      actors:
        planner: {model: claude-sonnet-5-5, batch: {poll_interval: -5}}
      """
    When the actors are loaded from "actors.yaml"
    Then a ConfigurationError is raised
    And the error message contains "batch.poll_interval: Input should be greater than 0 (got -5)"

  Scenario Outline: A LOWTIDE_POLL_INTERVAL that is not a number of seconds is refused, naming the variable
    Given the environment variable "LOWTIDE_POLL_INTERVAL" is "<value>"
    When the actors are loaded from the dict:
      """
      {"name": "writer", "model": "claude-sonnet-5-5"}
      """
    Then a ConfigurationError is raised
    And the error message contains "LOWTIDE_POLL_INTERVAL must be a number of seconds above 0 (got '<value>')"
    And the error names the field "LOWTIDE_POLL_INTERVAL"

    Examples:
      | value |
      | soon  |
      | 0     |
      | -5    |
      | inf   |
