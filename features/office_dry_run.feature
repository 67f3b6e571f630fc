Feature: lowtide run over office files: the dry run of every kind, and a run without the converter installed
  As an operator about to send a folder of Word, Excel and PowerPoint files and web pages
  I want the dry run to name each converted file with its kind and tokens, and a run without the converter to say so
  So that I know what a run over office files will send before any money is spent

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
    And "briefing.pptx" in the input folder is a PowerPoint presentation
    And "page.html" in the input folder is an HTML page
    And the file "files.csv" in the scenario's folder holds:
      """
      id,file
      briefing,briefing.pptx
      page,page.html
      """

  Scenario: The dry run of a CSV naming a PowerPoint presentation and an HTML page names each, its kind and its tokens
    When "lowtide run files.csv --actor actor.yaml --template 'Summarise it' --file-column file --id-column id --dry-run" runs in the scenario's folder
    Then the command exits with 0
    And the command printed "2 file(s) sent as the text they convert to:"
    And the command printed "briefing.pptx: a PowerPoint presentation, about"
    And the command printed "page.html: an HTML page, about"
    And the API received no calls at all

  Scenario: Without the converter installed, a run over a PowerPoint presentation is refused naming the extra, before anything is sent
    Given markitdown cannot be imported
    When "lowtide run files.csv --actor actor.yaml --template 'Summarise it' --file-column file --id-column id --out out.jsonl --progress none" runs in the scenario's folder
    Then the command exits with 2
    And the command printed on stderr "line 2: file 'briefing.pptx' is a PowerPoint presentation (.pptx): lowtide sends it as text converted by markitdown, which is not installed (pip install 'lowtide[documents]')"
    And the API received no calls at all
