Feature: What the test suite needs from the system is there before any session runs
  As a newcomer running the README's test command on a fresh machine
  I want nox to install what the suite needs that pip cannot, or to say in one line what is missing and how to install it
  So that no session runs for half an hour and then fails on a browser that was never there

  nox checks what the sessions it is about to run need (features/support/system_packages.py: a PostgreSQL server,
  Chromium and its driver, node and npm, curl), once, before any starts. The systems here are described, not this
  machine: a PATH of their own where apt-get, apt-cache and sudo are scripts that write down how they were called, and
  apt-get "installs" a package by putting its commands on that PATH.

  Scenario: What a session needs is installed quietly by root, once; the next check runs nothing at all
    Given a fresh Debian system whose sudo is not installed
    When root ensures what the sessions "robot" need
    Then the check succeeds, having said only "nox: installing chromium chromium-driver curl with apt-get: session robot needs them"
    And the system's apt-get was called as:
      | call                                                                                                                                     |
      | apt-get -o DPkg::Lock::Timeout=600 update -qq (DEBIAN_FRONTEND=noninteractive)                                                           |
      | apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium chromium-driver curl (DEBIAN_FRONTEND=noninteractive) |
    And the system now has chromium, chromedriver, curl
    When root ensures what the sessions "robot" need
    Then the check succeeds, having said nothing
    And the system's apt-get was called 2 times in all

  Scenario: Sessions that need nothing from the system look for nothing, even where nothing is installed
    Given a fresh Debian system whose sudo is not installed
    When a user who is not root ensures what the sessions "lint, types, behave, pydantic_ai, langchain, coverage_report" need
    Then the check succeeds, having said nothing
    And neither the system's apt-get nor its sudo was called

  Scenario: A user who is not root installs through sudo, when sudo asks no password, and PostgreSQL's server too
    Given a fresh Debian system whose sudo asks no password
    When a user who is not root ensures what the sessions "postgres, robot" need
    Then the check succeeds, having said only "nox: installing postgresql chromium chromium-driver curl with apt-get: sessions postgres, robot need them"
    And the system's sudo was called as:
      | call                                                                                                                                                          |
      | sudo -n true                                                                                                                                                  |
      | sudo -n env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq                                                                      |
      | sudo -n env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends postgresql chromium chromium-driver curl |
    And the system now has PostgreSQL's server, chromium, chromedriver, curl

  Scenario Outline: A user who may not install is told in one line what is missing and the command that installs it: <case>
    Given a fresh Debian system whose sudo <sudo>
    When a user who is not root ensures what the sessions "robot, postgres, lint" need
    Then the check fails, having said only "nox: sessions robot, postgres need chromium, chromedriver, curl, PostgreSQL's server, not installed here (<why>). <how>: <command>"
    And the system's apt-get was never called

    Examples:
      | case                       | sudo                     | why                                     | how              | command                                                                       |
      | sudo asks for a password   | asks for a password      | not root, and sudo asks for a password  | Install          | sudo apt-get install -y --no-install-recommends chromium chromium-driver curl postgresql |
      | no sudo                    | is not installed         | not root, and no sudo                   | Install, as root | apt-get install -y --no-install-recommends chromium chromium-driver curl postgresql      |

  Scenario: A node older than the TypeScript SDKs need, where apt-get has none newer, is said; Debian 12's is not installed
    Given a fresh Debian system whose sudo is not installed
    And its node is "v18.19.0", its npm and curl are there, and apt-get's nodejs is "18.19.0+dfsg-6~deb12u2"
    When root ensures what the sessions "serve_clients" need
    Then the check fails, having said only "nox: session serve_clients needs node 20 or newer (found v18.19.0), not installed here (apt-get has none new enough). Install: node 20 or newer from https://nodejs.org/en/download"
    And the system's apt-get was called as:
      | call                                                                           |
      | apt-get -o DPkg::Lock::Timeout=600 update -qq (DEBIAN_FRONTEND=noninteractive) |

  Scenario: A node new enough is installed with npm where apt-get has one
    Given a fresh Debian system whose sudo is not installed
    And apt-get's nodejs is "20.19.2+dfsg-1"
    When root ensures what the sessions "serve_clients" need
    Then the check succeeds, having said only "nox: installing nodejs npm curl with apt-get: session serve_clients needs them"
    And the system now has node, npm, curl

  Scenario: apt-get failing is said in one line, with what it said last
    Given a fresh Debian system whose sudo is not installed
    And its apt-get fails to install, saying "E: Unable to locate package chromium-driver"
    When root ensures what the sessions "robot" need
    Then the check fails, having said "nox: session robot needs chromium, chromedriver, curl; apt-get install chromium chromium-driver curl failed (exit 100): E: Unable to locate package chromium-driver"

  Scenario: On a system without apt-get, the check nox runs says in one line what to install, whoever runs it
    Given a system with none of what the suite needs, and no apt-get
    When the check nox runs is run for "serve_clients" in a process of its own
    Then the process ends with 1, having printed only "nox: session serve_clients needs node 20 or newer, npm, curl, not installed here (this system has no apt-get). Install (Debian's packages, as root): apt-get install -y --no-install-recommends curl; node 20 or newer with npm from https://nodejs.org/en/download"

  Scenario: nox checks the sessions it selected before any of them starts, and a session that needs nothing starts
    Given a system with none of what the suite needs, and no apt-get
    When "nox -s lint serve_clients" runs with this checkout's noxfile on that system
    Then the process ends with 1, having printed "nox: session serve_clients needs node 20 or newer, npm, curl, not installed here"
    And no session started
    When "nox -s lint --no-venv" runs with this checkout's noxfile on that system
    Then nox started the session lint, having said nothing of what the system lacks

  Scenario: CI runs the README's test command as the README writes it
    Given a copy of README.md and .ci/run, where python3 only writes down how it was called
    When .ci/run runs there
    Then it ran the README's test command, printing it first
    And python3 was called as "python3 -m venv .venv", and the command stopped there, as it would have for a reader
