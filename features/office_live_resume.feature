Feature: lowtide run --mode live over a folder of office files, stopped and resumed
  As an operator with a CSV naming Word, Excel and PowerPoint files and web pages, run live
  I want a resumed live `lowtide run` to convert only the files it has not sent
  So that a live run over office files resumes as cheaply as a batch run does

  Background:
    Given an emulated Anthropic API served on a socket, whose batches take 0 seconds
    And an actor file "actor.yaml" for that API, with the key in "LOWTIDE_SCENARIO_KEY":
      """
      name: reader
      model: claude-sonnet-4-5
      max_tokens: 64
      live: {max_concurrency: 1, ramp_start: 1}
      """
    And "report.docx" in the input folder is a Word document
    And "tides.xlsx" in the input folder is an Excel workbook
    And "briefing.pptx" in the input folder is a PowerPoint presentation
    And "page.html" in the input folder is an HTML page
    And the file "files.csv" in the scenario's folder holds:
      """
      id,file
      report,report.docx
      tides,tides.xlsx
      briefing,briefing.pptx
      page,page.html
      """
    When "lowtide run files.csv --mode live --actor actor.yaml --template 'Summarise it' --file-column file --id-column id --run-id office --max-cost-usd 0.0019 --out out.jsonl --progress none" runs in the scenario's folder
    Then the command printed "run office: 4 item(s): 2 succeeded, 2 not-run;"

  Scenario: A live CSV run resumed converts only the files it has not sent
    When the conversions of the next command are counted, nothing converted before kept
    And "lowtide run files.csv --mode live --actor actor.yaml --template 'Summarise it' --file-column file --id-column id --run-id office --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run office: 4 item(s): 4 succeeded"
    And the command converted only the files of the 2 rows it had not sent
    And each line of out.jsonl names its row's file

  Scenario: A file a live run sent, deleted or damaged since, does not stop its resume: its text is in the ledger
    When the file of the first row sent is deleted, and the file of the second is damaged
    And "lowtide run files.csv --mode live --actor actor.yaml --template 'Summarise it' --file-column file --id-column id --run-id office --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "run office: 4 item(s): 4 succeeded"

  Scenario: A file a live resume has still to send that is missing is refused by name, and nothing more is sent
    When the file of the first row not sent is deleted
    And "lowtide run files.csv --mode live --actor actor.yaml --template 'Summarise it' --file-column file --id-column id --run-id office --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr that file of the first row not sent does not exist
