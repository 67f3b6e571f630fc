@stores
Feature: lowtide serve charges each client key's calls to its team and project
  As the owner of an organisation's model budget, running one lowtide serve for several teams
  I want each client key to carry a team and project, its clients' calls charged there and held by their caps
  So that a team's spend through the shared server is its own, whatever the served actor names

  Background:
    Given an emulator behind lowtide serve, on a socket

  Scenario Outline: A call through a team's client key is charged to that team and project, in <mode> mode
    Given lowtide serve in <mode> mode for an actor of team "platform", with the client key "key-research" of team "research" and project "tides" and the plain client key "key-plain"
    When the SDK sends "What is a tide?" to lowtide serve with the client key "key-research"
    And the SDK sends "What is a wave?" to lowtide serve with the client key "key-plain"
    Then both served calls are answered
    And the ledger's spend shows 1 request of team "research" and project "tides", and 1 of team "platform" and no project
    And the ledger's spend shows nothing reserved

    Examples:
      | mode  |
      | batch |
      | live  |

  Scenario Outline: A client key's team cap refuses its call before anything is sent, in <mode> mode; another key's calls go on
    Given the ledger caps team "research" at $0.000001 per day
    And lowtide serve in <mode> mode for an actor of team "platform", with the client key "key-research" of team "research" and project "tides" and the plain client key "key-plain"
    When the SDK sends "What is a tide?" to lowtide serve with the client key "key-research"
    And the SDK sends "What is a wave?" to lowtide serve with the client key "key-plain"
    Then the first served call was refused with status <status>, saying "team 'research''s cap"
    And the second served call is answered
    And the ledger's spend shows 1 request of team "platform" and no project

    Examples:
      | mode  | status |
      | batch | 402    |
      | live  | 402    |

  Scenario: `lowtide serve --client-key-env` takes a key from the environment with its team and project, and refuses a bad one
    When `lowtide serve --client-key-env` is given "LOWTIDE_TEST_KEY_UNSET:team=research"
    Then it is refused before serving, saying "LOWTIDE_TEST_KEY_UNSET is not set"
    When `lowtide serve --client-key-env` is given "LOWTIDE_TEST_KEY:team=research,colour=blue"
    Then it is refused before serving, saying "colour"
