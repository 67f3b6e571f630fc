Feature: The public API
  As a developer importing lowtide
  I want the package's `__all__` to list exactly what it exports, in order
  So that `from lowtide import *`, documentation and type checkers all see the same public API

  Scenario Outline: <module>.__all__ is sorted and matches what the package exports
    Then <module>'s __all__ is sorted
    And every name in <module>'s __all__ is exported
    And every public object <module> exports is in its __all__
    And "from <module> import *" imports exactly the names in __all__

    Examples:
      | module            |
      | lowtide           |
      | lowtide.providers |
      | lowtide.testing   |
      | lowtide.bulk      |

  Scenario: lowtide.bulk keeps the names it has always had, its modules grouped by stage behind it
    Then lowtide.bulk's __all__ is exactly, each of them importable from it in a new Python process:
      | name              |
      | CallbackReporter  |
      | FileInfo          |
      | InputError        |
      | InputProblem      |
      | Job               |
      | MultiReporter     |
      | NullReporter      |
      | PlainReporter     |
      | ProgressCallback  |
      | ProgressReporter  |
      | ReporterMode      |
      | RichReporter      |
      | RunProgress       |
      | check_jobs        |
      | file_block        |
      | inspect_file      |
      | job_messages      |
      | load_csv          |
      | load_csv_stream   |
      | load_jsonl        |
      | load_jsonl_stream |
      | reporter_for      |

  Scenario: A provider plugin, and lowtide's own fake provider, need nothing but the public faces
    # lowtide for the request and answer types, the errors, the clock and the registry; lowtide.providers for the
    # provider contract. An internal module may move in any release; these do not.
    Then features/plugins/lowtide_tidepool_plugin.py imports nothing of lowtide but "lowtide" and "lowtide.providers"
    And features/plugins/lowtide_echo_plugin.py imports nothing of lowtide but "lowtide" and "lowtide.providers"
    And src/lowtide/testing imports nothing of lowtide but "lowtide", "lowtide.providers", "lowtide.testing.fake_api" and "lowtide.testing.fake_provider"

  Scenario: lowtide reports the installed version
    Then lowtide.__version__ is the version of the installed distribution

  Scenario: Importing lowtide loads no provider's SDK until an actor of that provider needs it
    # That `import lowtide` alone loads neither SDK is the outline's first row below (it names every SDK).
    When a new Python process imports lowtide and asks it for ClaudeBatchProvider
    Then the anthropic SDK was imported, and the openai SDK was not

  Scenario: An Anthropic actor loads no OpenAI SDK, and an OpenAI actor no Anthropic SDK
    When a new Python process builds an Anthropic actor in batch mode and its provider
    Then the anthropic SDK was imported, and the openai SDK was not
    When a new Python process builds an OpenAI actor in batch mode and its provider
    Then the openai SDK was imported, and the anthropic SDK was not

  Scenario Outline: <what> loads no provider's SDK, no web server and no terminal UI
    # What starting costs: every `lowtide` command, and every program that imports lowtide, pays for what is imported
    # before it does anything (docs/benchmarks.md, "Starting"). A provider's SDK is loaded by an actor of its own.
    When a new Python process runs <code>
    Then it imported none of <packages>

    Examples:
      | what                     | code                                                          | packages                                                                                      |
      | import lowtide           | import lowtide                                                | anthropic, openai, google.genai, boto3, botocore, mistralai, groq, together, starlette, uvicorn, rich, asyncio, pydantic |
      | lowtide --help           | from lowtide.cli import main; main(["--help"])                | anthropic, openai, google.genai, boto3, botocore, mistralai, groq, together, starlette, uvicorn, rich, asyncio, pydantic |
      | the in-process emulator  | from lowtide.emulator import Emulator; Emulator()             | anthropic, openai, google.genai, boto3, botocore, mistralai, groq, together, uvicorn, rich                       |
