Feature: `lowtide spend` as text for a terminal, and the arguments it cannot use refused before the ledger is touched
  As the owner of an organisation's model budget reading the spend at a terminal
  I want the spend, the caps and the audit printed as lines I can read, and a clear word for an argument I got wrong
  So that I see who spent what without a JSON tool, and a typo never sets a cap I did not mean

  # With max_tokens 4000, a call to claude-sonnet-5-5 can cost at most $0.020028 at batch prices; its emulated answer
  # costs $0.000069.

  Background:
    Given an emulated Anthropic API whose batches take 120 seconds
    And an actor "planner" with:
      """
      batch_processing: batch
      max_tokens: 4000
      team: research
      project: tides
      """
    When the actor is asked "Plan issue 42"

  Scenario: The report as text: a line per day, team, project, actor and model, then the caps and the audit
    When "lowtide spend --set-cap project:tides:all:7.5 --audit" runs in the scenario's folder
    Then the command exits with 0
    And the spend report's text is, with the day and hosts of this run:
      """
      ledger {ledger}: 1 line(s)
        {day}  team research  project tides  planner  claude-sonnet-5-5: 1 request(s), $0.000069 spent, $0.000000 reserved
        cap: project 'tides''s cap of $7.50 in all
        audit {time}  create {key}  team research  project tides  planner, worst case $0.020028  on {host}
      """

  Scenario: A ledger with no spend since the day asked prints no line, and no cap
    When "lowtide spend --since 2999-01-01" runs in the scenario's folder
    Then the command exits with 0
    And the spend report's text is, with the day and hosts of this run:
      """
      ledger {ledger}: 0 line(s)
      """

  Scenario Outline: An argument the report cannot use is refused with what to write instead, and no cap is set
    When "lowtide spend <arguments>" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "lowtide: <message>"
    And the ledger holds no spend cap

    Examples:
      | arguments                              | message                                                                                             |
      | --audit --csv                          | --audit prints as text or --json; --csv is the spend lines alone.                                    |
      | --since 2026-13-01                     | --since '2026-13-01' is not a day: write YYYY-MM-DD.                                                 |
      | --since yesterday                      | --since 'yesterday' is not a day: write YYYY-MM-DD.                                                  |
      | --set-cap team:research:week:5         | --set-cap 'team:research:week:5' is not SCOPE:NAME:PERIOD:USD (team or project; day, month or all; dollars). |
      | --set-cap team:research:day            | --set-cap 'team:research:day' is not SCOPE:NAME:PERIOD:USD (team or project; day, month or all; dollars).    |
      | --set-cap actor:planner:day:5          | --set-cap 'actor:planner:day:5' is not SCOPE:NAME:PERIOD:USD (team or project; day, month or all; dollars).  |
      | --set-cap team:research:day:five       | --set-cap 'team:research:day:five' is not SCOPE:NAME:PERIOD:USD (team or project; day, month or all; dollars). |
      | --set-cap team::day:5                  | --set-cap 'team::day:5': a cap needs a name and a limit of 0 or more.                                |
      | --set-cap team:research:day:-1         | --set-cap 'team:research:day:-1': a cap needs a name and a limit of 0 or more.                       |
      | --set-cap team:research:day:Infinity   | --set-cap 'team:research:day:Infinity': a cap needs a name and a limit of 0 or more.                 |
