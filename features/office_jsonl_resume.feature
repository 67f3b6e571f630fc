Feature: lowtide run over a JSONL input naming office files, stopped and resumed
  As an operator with a JSONL input whose lines name Word, Excel and PowerPoint files and web pages
  I want a resumed `lowtide run` to need only the files of the lines it has still to send
  So that a file sent before, deleted or damaged since, does not stop a run whose ledger holds its text

  Background:
    Given an emulated Anthropic API served on a socket, whose batches take 0 seconds
    And an actor file "actor.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reader
      model: claude-sonnet-4-5
      max_tokens: 64
      batch_processing: batch
      batch: {poll_interval: 0.05, max_attempts: 1}
      """
    And "report.docx" in the input folder is a Word document
    And "tides.xlsx" in the input folder is an Excel workbook
    And "briefing.pptx" in the input folder is a PowerPoint presentation
    And "page.html" in the input folder is an HTML page
    And the file "files.jsonl" in the scenario's folder holds:
      """
      {"id": "report", "file": "report.docx", "prompt": "Summarise it"}
      {"id": "tides", "file": "tides.xlsx", "prompt": "Summarise it"}
      {"id": "briefing", "file": "briefing.pptx", "prompt": "Summarise it"}
      {"id": "page", "file": "page.html", "prompt": "Summarise it"}
      """
    When "lowtide run files.jsonl --actor actor.yaml --run-id office --max-cost-usd 0.0009 --items-per-batch 1 --max-parallel-batches 1 --out out.jsonl --progress none" runs in the scenario's folder
    Then the command printed "run office: 4 item(s): 2 succeeded, 2 not-run;"

  Scenario: A file a JSONL run sent, deleted or damaged since, does not stop its resume: its text is in the ledger
    When the file of the first row sent is deleted, and the file of the second is damaged
    And "lowtide run files.jsonl --actor actor.yaml --run-id office --items-per-batch 1 --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run office: 4 item(s): 4 succeeded"
    And the API was sent each row's file once, titled with the file's name
    And each line of out.jsonl names its row's file

  Scenario: A file a JSONL resume has still to send that is missing is refused by its line, and nothing is sent
    When the file of the first row not sent is deleted
    And "lowtide run files.jsonl --actor actor.yaml --run-id office --items-per-batch 1 --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr that the line of the first row not sent names a file that does not exist
    And the API received no more batches
