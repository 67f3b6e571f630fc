Feature: Word, Excel and PowerPoint files and HTML pages sent as the text they convert to
  As a developer who processes contracts, reports and slide decks in bulk
  I want a job naming a .docx, .xlsx, .pptx or .html file to send the Markdown it converts to, as a text document
  So that a folder of office files runs on every provider as PDFs do, with the same checks before anything is sent

  Rule: Each kind travels as a plain-text document of its Markdown, titled with the file's name

    Scenario: A Word document keeps its heading, its table and its footnote
      Given "report.docx" in the input folder is a Word document
      When the block for "report.docx" is built with citations
      Then the block is a text document titled "report.docx" whose text holds these lines, in this order:
        """
        # Harbour report
        The quay at Brest reopens on 3 May. [[1]](#footnote-1)
        | Port | High water |
        | Brest | 06:12 |
        1. Per the harbour master, 2026. [↑](#footnote-ref-1)
        """
      And the block asks for citations

    Scenario: An Excel workbook keeps each sheet, under its name
      Given "tides.xlsx" in the input folder is an Excel workbook
      When the block for "tides.xlsx" is built
      Then the block is a text document titled "tides.xlsx" whose text holds these lines, in this order:
        """
        ## Brest
        | Day | High water | Metres |
        | Monday | 06:12 | 7.1 |
        ## Cherbourg
        | Monday | 07:40 | 6.3 |
        """

    Scenario: A PowerPoint presentation keeps each slide's text and its speaker notes
      Given "briefing.pptx" in the input folder is a PowerPoint presentation
      When the block for "briefing.pptx" is built
      Then the block is a text document titled "briefing.pptx" whose text holds these lines, in this order:
        """
        # Tide briefing
        Neap tides this week
        ### Notes:
        Mention the Brest quay closure.
        """

    Scenario: An HTML page keeps what a reader sees, as Markdown, and not its scripts or styles
      Given "page.html" in the input folder is an HTML page
      When the block for "page.html" is built
      Then the block is a text document titled "page.html" whose text holds these lines, in this order:
        """
        # Tide tables
        High water at **Brest**: 06:12 & 18:40.
        | Port | Metres |
        | Brest | 7.1 |
        """
      And the block's text does not hold "alert", "color: navy" or "<"

  Rule: A file that cannot be converted is refused by name, with the reason, before anything is sent

    Scenario Outline: <what> is refused
      Given "<name>" in the input folder is <content>
      When the block for "<name>" is built
      Then the input is refused with:
        """
        <name>: <reason>
        """

      Examples:
        | what                               | name         | content                                                          | reason |
        | A damaged Word document            | report.docx  | the bytes b'PK\x03\x04\x14\x00\x06 cut short'                    | is a Word document (.docx) that could not be converted to text: File is not a zip file |
        | A CSV named as an Excel workbook   | tides.XLSX   | the text "time,height\n06:10,4.2"                                | is an Excel workbook (.xlsx) that could not be converted to text: File is not a zip file |
        | A Word document under a password   | locked.docx  | a Word document, protected by the password "tide"               | is a Word document (.docx) protected by a password (it is encrypted): save a copy without the password first |
        | A workbook under a password        | locked.xlsx  | an Excel workbook, protected by the password "tide"             | is an Excel workbook (.xlsx) protected by a password (it is encrypted): save a copy without the password first |
        | A page of scripts alone            | blank.html   | the text "<html><body><script>go()</script></body></html>"       | is an HTML page (.html) that holds no text once converted; there is nothing to send |

    Scenario: Without the converter installed, an office file is refused naming the extra, a damaged one as damaged, and an HTML page travels as it is
      # A file that is no zip archive is refused before the converter is loaded (its import: seconds of CPU).
      Given "report.docx" in the input folder is a Word document
      And "broken.docx" in the input folder is the bytes b'PK\x03\x04\x14\x00\x06 cut short'
      And "page.html" in the input folder is the text "<p>High water at noon</p>"
      And markitdown cannot be imported
      When the block for "report.docx" is built
      Then the input is refused with:
        """
        report.docx: is a Word document (.docx): lowtide sends it as text converted by markitdown, which is not installed (pip install 'lowtide[documents]')
        """
      When the block for "broken.docx" is built
      Then the input is refused with:
        """
        broken.docx: is a Word document (.docx) that could not be converted to text: File is not a zip file
        """
      When the block for "page.html" is built
      Then the block is a text document titled "page.html" holding "<p>High water at noon</p>"

  Rule: A bulk run over office files works on every provider, in batch and live mode, as it does for PDFs

    Scenario Outline: A <mode> run on <provider> sends each file's converted text
      Given the emulator on a socket, whose batches take 0 seconds
      And the programs' actor sends its batches to the <provider> API
      And "report.docx" in the input folder is a Word document
      And "tides.xlsx" in the input folder is an Excel workbook
      And "briefing.pptx" in the input folder is a PowerPoint presentation
      And "page.html" in the input folder is an HTML page
      When the programs' actor maps "Summarise it" over each of those files in <mode> mode
      Then every item succeeded, and the API was sent each file's converted text under its name

      Examples:
        | provider     | mode  |
        | anthropic    | batch |
        | anthropic    | live  |
        | openai       | batch |
        | openai       | live  |
        | azure_openai | batch |
        | azure_openai | live  |
        | gemini       | batch |
        | gemini       | live  |
        | bedrock      | batch |
        | bedrock      | live  |
        | mistral      | batch |
        | mistral      | live  |
        | groq         | batch |
        | groq         | live  |
        | together     | batch |
        | together     | live  |

    Scenario: A run stopped with its first batch out, resumed by a new program, sends each file once, converting only those not sent
      Given the emulator on a socket, whose batches take 60 seconds
      And the programs' actor sends its batches to the anthropic API
      And "report.docx" in the input folder is a Word document
      And "tides.xlsx" in the input folder is an Excel workbook
      And "briefing.pptx" in the input folder is a PowerPoint presentation
      And "page.html" in the input folder is an HTML page
      When a program maps "Summarise it" over each of those files, 2 a batch, 1 batch at a time, as run "office", and stops once its first batch is out
      And a new program, which has converted nothing yet, maps "Summarise it" over each of those files, 2 a batch, as run "office"
      Then every item succeeded, and the API was sent each file's converted text under its name
      And each file's request was created once at the API, in 2 batches
      And the new program converted only the 2 files whose requests were not in the ledger yet

    Scenario: A resume converts again a file sent before whose bytes changed since (its request stays as sent)
      Given the emulator on a socket, whose batches take 60 seconds
      And the programs' actor sends its batches to the anthropic API
      And "report.docx" in the input folder is a Word document
      And "tides.xlsx" in the input folder is an Excel workbook
      And "briefing.pptx" in the input folder is a PowerPoint presentation
      And "page.html" in the input folder is an HTML page
      When a program maps "Summarise it" over each of those files, 2 a batch, 1 batch at a time, as run "office", and stops once its first batch is out
      And "report.docx" in the input folder is saved again, its text the same but its bytes not
      And a new program, which has converted nothing yet, maps "Summarise it" over each of those files, 2 a batch, as run "office"
      Then every item succeeded
      And the new program converted "report.docx" and the files whose requests were not in the ledger yet, each once
      And each file's request was created once at the API, in 2 batches

    Scenario: Anthropic's citations point into the converted text, under the file's name
      Given the emulator on a socket, whose batches take 0 seconds
      And the programs' actor sends its batches to the anthropic API
      And "report.docx" in the input folder is a Word document
      When the programs' actor maps "When does the quay at Brest reopen?" over "report.docx" with citations in batch mode
      Then the item's answer cites "The quay at Brest reopens on 3 May." from the document "report.docx"

    Scenario: A dry run names each converted file, its kind and its tokens, and a file many jobs name is converted once
      Given "report.docx" in the input folder is a Word document
      And "tides.xlsx" in the input folder is an Excel workbook
      And an actor of anthropic in batch mode against the emulator, on an in-memory ledger
      When the actor plans a run of 3 jobs naming "report.docx" and 1 naming "tides.xlsx", counting conversions
      Then the plan says, before "not checked (a dry run asks the API nothing)":
        """
        2 file(s) sent as the text they convert to:
          report.docx: a Word document, about {report.docx} tokens
          tides.xlsx: an Excel workbook, about {tides.xlsx} tokens
        """
      And each file was converted once

  Rule: A message's document block by path travels as a bulk job's file does, on every provider

    Scenario Outline: A call on <provider> in <mode> mode sends the Word document its message names by path
      Given the emulator on a socket, whose batches take 0 seconds
      And the programs' actor sends its batches to the <provider> API
      And "report.docx" in the input folder is a Word document
      When the programs' actor is asked "Summarise it" in <mode> mode after a document block with the path "report.docx"
      Then the answer came from the converted text of "report.docx", under its name

      Examples:
        | provider     | mode  |
        | anthropic    | batch |
        | anthropic    | live  |
        | openai       | live  |
        | azure_openai | batch |
        | gemini       | batch |
        | bedrock      | live  |
        | mistral      | batch |
        | groq         | live  |
        | together     | batch |

    Scenario Outline: A document block by path whose file is <what> is refused before anything is recorded or sent
      Given "<name>" in the input folder is <content>
      And an actor of anthropic in batch mode against the emulator, on an in-memory ledger
      When the actor is asked "Summarise it" after a document block with the path "<path>"
      Then the call is refused before anything is recorded, with:
        """
        messages.0.content.0: file '<path>' <reason>
        """

      Examples:
        | what               | name        | content                                                | path        | reason |
        | missing            | other.docx  | a Word document                                        | report.docx | does not exist (looked for {folder}/report.docx) |
        | an older Word file | old.doc     | the text "a Word 97 file"                              | old.doc     | is a Word document (.doc), a kind of file the API does not take; it takes PDF (.pdf), images (.png, .jpg, .jpeg, .gif, .webp), UTF-8 text (.txt, .md, .csv, .json, .html, .xml, .log, .rst and other plain-text names), and Word, Excel and PowerPoint files (.docx, .xlsx, .pptx) as text: save it as .docx, .xlsx or .pptx, or export it as PDF or as text first |
        | under a password   | locked.docx | a Word document, protected by the password "tide"      | locked.docx | is a Word document (.docx) protected by a password (it is encrypted): save a copy without the password first |
        | damaged            | broken.docx | the bytes b'PK\x03\x04\x14\x00\x06 cut short'          | broken.docx | is a Word document (.docx) that could not be converted to text: File is not a zip file |

    Scenario: A document block by path keeps its title, citations and cache_control, and takes nothing else
      Given "report.docx" in the input folder is a Word document
      And an actor of anthropic in batch mode against the emulator, on an in-memory ledger
      When the actor builds the request of a message whose first block is {"type": "document", "path": "report.docx", "title": "Harbour", "citations": {"enabled": true}, "cache_control": {"type": "ephemeral"}}
      Then the request's first block is the text document of "report.docx" titled "Harbour", citations on, cache_control kept
      When the actor builds the request of a message whose first block is {"type": "document", "path": "report.docx", "source": {"type": "text", "data": "x"}}
      Then the call is refused before anything is recorded, with:
        """
        messages.0.content.0: a document block given by path takes cache_control, citations, context, path, title; not source (its source is made from the file).
        """

    Scenario: A bulk run whose messages name office files by path, stopped and resumed, converts only those not sent
      Given the emulator on a socket, whose batches take 60 seconds
      And the programs' actor sends its batches to the anthropic API
      And "report.docx" in the input folder is a Word document
      And "tides.xlsx" in the input folder is an Excel workbook
      And "briefing.pptx" in the input folder is a PowerPoint presentation
      And "page.html" in the input folder is an HTML page
      When a program maps "Summarise it" over each of those files, each named by a document block, 2 a batch, 1 batch at a time, as run "blocks", and stops once its first batch is out
      And a new program, which has converted nothing yet, maps "Summarise it" over each of those files, each named by a document block, 2 a batch, as run "blocks"
      Then every item succeeded
      And each file's request was created once at the API, in 2 batches
      And the new program converted only the 2 files whose requests were not in the ledger yet
      And each item's result line names the file its document block sent

    Scenario: In a JSONL input, a document block by path is found from the input's folder and checked with its line
      Given "inputs/report.docx" in the input folder is a Word document
      And the input file "inputs/jobs.jsonl" holds:
        """
        {"messages": [{"role": "user", "content": [{"type": "document", "path": "report.docx"}, {"type": "text", "text": "Summarise it"}]}]}
        {"messages": [{"role": "user", "content": [{"type": "document", "path": "gone.docx"}, {"type": "text", "text": "Summarise it"}]}]}
        """
      When the jobs are loaded from "inputs/jobs.jsonl"
      Then the input is refused with:
        """
        inputs/jobs.jsonl, line 2: messages.0.content.0: file 'gone.docx' does not exist (looked for {folder}/inputs/gone.docx)
        """
      When the input file "inputs/jobs.jsonl" holds its first line alone, and the jobs are loaded from it
      Then job 0's document block names "{folder}/inputs/report.docx"
