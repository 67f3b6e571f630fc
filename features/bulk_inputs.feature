Feature: Bulk inputs
  As a developer with a folder of documents, or a spreadsheet of questions, to put through the batch API
  I want to load them from JSONL or CSV, every line checked and every file turned into the block the API expects
  So that a mistake on line 9,000 stops the run before it starts, not after I have paid for 8,999 answers

  # Files are made in a folder of the scenario's own, which is also the working directory while lowtide works.

  Scenario: A PDF becomes a base64 document titled with its file name
    Given "report.pdf" in the input folder is a PDF
    When the block for "report.pdf" is built
    Then the block is a document titled "report.pdf", holding the bytes of "report.pdf" in base64 as "application/pdf"
    And the block does not ask for citations

  Scenario: A document asks for citations when they are wanted
    Given "report.pdf" in the input folder is a PDF
    When the block for "report.pdf" is built with citations
    Then the block is a document titled "report.pdf", holding the bytes of "report.pdf" in base64 as "application/pdf"
    And the block asks for citations

  Scenario: A title given for the block replaces the file name
    Given "scan-0041.pdf" in the input folder is a PDF
    When the block for "scan-0041.pdf" is built with the title "Harbour lease, 2019"
    Then the block is a document titled "Harbour lease, 2019", holding the bytes of "scan-0041.pdf" in base64 as "application/pdf"

  Scenario Outline: An image becomes a base64 image block, its media type read from its first bytes
    Given "<name>" in the input folder is <content>
    When the block for "<name>" is built with citations
    Then the block is an image holding the bytes of "<name>" in base64 as "<media type>"
    And the block has no title and does not ask for citations

    Examples:
      | name       | content      | media type |
      | chart.png  | a PNG image  | image/png  |
      | photo.jpg  | a JPEG image | image/jpeg |
      | photo.jpeg | a JPEG image | image/jpeg |
      | PHOTO.JPG  | a JPEG image | image/jpeg |
      | tide.gif   | a GIF image  | image/gif  |
      | buoy.webp  | a WebP image | image/webp |

  Scenario Outline: A UTF-8 text file becomes a plain-text document, whatever its name
    Given "<name>" in the input folder is the text "Tide tables for May: high water 06:12, 18:40 — ±5 min"
    When the block for "<name>" is built with citations
    Then the block is a text document titled "<name>" holding "Tide tables for May: high water 06:12, 18:40 — ±5 min"
    And the block asks for citations

    Examples:
      | name       |
      | notes.txt  |
      | README.md  |
      | tides.csv  |
      | tides.json |
      | page.html  |
      | feed.xml   |
      | run.log    |
      | index.rst  |
      | CHANGES    |
      | notes.text |

  Scenario: A UTF-8 byte order mark is not part of the text sent
    Given "notes.txt" in the input folder is the bytes b'\xef\xbb\xbfHigh water at noon'
    When the block for "notes.txt" is built
    Then the block is a text document titled "notes.txt" holding "High water at noon"

  Scenario Outline: A file the API cannot take is refused, by name and with what to do, before anything is sent
    Given "<name>" in the input folder is <content>
    When the block for "<name>" is built
    Then the input is refused with:
      """
      <name>: <reason>
      """

    Examples:
      | name        | content                             | reason                                                                                                                                                                      |
      | missing.pdf | nothing                             | does not exist                                                                                                                                                              |
      | scans       | a folder                            | is a folder, not a file; name one file per job                                                                                                                              |
      | empty.txt   | no bytes                            | is empty; there is nothing to send                                                                                                                                          |
      | blank.md    | the bytes b'\xef\xbb\xbf \n\t\n'       | holds no text, only white space; there is nothing to send                                                                                                                   |
      | report.docx | the bytes b'PK\x03\x04\x14\x00\x06' | is a Word document (.docx) that could not be converted to text: File is not a zip file |
      | blob.bin    | the bytes b'\x00\x01\x02 frames'    | is not a kind of file the API takes: it supports PDF (.pdf), images (.png, .jpg, .jpeg, .gif, .webp), UTF-8 text (.txt, .md, .csv, .json, .html, .xml, .log, .rst and other plain-text names), and Word, Excel and PowerPoint files (.docx, .xlsx, .pptx) as text; convert it first |
      | photo.png   | a JPEG image                        | has the .png extension but holds a JPEG image; rename it to end in .jpg                                                                                                     |
      | scan.pdf    | a PNG image                         | has the .pdf extension but holds a PNG image; rename it to end in .png                                                                                                      |
      | notes.txt   | a PDF                               | holds a PDF but has the .txt extension; rename it to end in .pdf                                                                                                            |
      | tide.gif    | the text "not a picture"            | has the .gif extension but is not a GIF image (its first bytes say otherwise); the API takes PDF (.pdf), images (.png, .jpg, .jpeg, .gif, .webp), UTF-8 text (.txt, .md, .csv, .json, .html, .xml, .log, .rst and other plain-text names), and Word, Excel and PowerPoint files (.docx, .xlsx, .pptx) as text |
      | latin.txt   | the bytes b'caf\xe9 au lait'        | is not UTF-8 text: the byte 0xe9 at offset 3 is not valid UTF-8; save it as UTF-8                                                                                           |
      | blob.txt    | the bytes b'ab\x00cd'               | is not UTF-8 text: it holds binary data (a NUL byte at offset 2); save it as UTF-8                                                                                          |
      | late.txt    | text of 5000 bytes, then the bytes b'\xff' | is not UTF-8 text: the byte 0xff at offset 5000 is not valid UTF-8; save it as UTF-8                                                                                 |
      | tide.sock   | a socket                            | is not a regular file (a pipe, socket or device); save what it holds to a file                                                                                              |
      | memory.pdf  | a link to /proc/self/mem            | cannot be read: Input/output error                                                                                                                                          |

  Scenario Outline: An office file, an archive or another binary kind is refused by its name or its first bytes, even when they decode as UTF-8
    Given "<name>" in the input folder is the bytes <bytes>
    When the block for "<name>" is built
    Then the input is refused with:
      """
      <name>: is <what>, a kind of file the API does not take; it takes PDF (.pdf), images (.png, .jpg, .jpeg, .gif, .webp), UTF-8 text (.txt, .md, .csv, .json, .html, .xml, .log, .rst and other plain-text names), and Word, Excel and PowerPoint files (.docx, .xlsx, .pptx) as text: <advice>
      """

    Examples:
      | name        | bytes                                                  | what                                                                             | advice                                           |
      | upload      | b'PK\x03\x04 word/document.xml <w:t>High tide</w:t>'    | a zip archive (Word, Excel, PowerPoint and OpenDocument files are zip archives) | name a Word, Excel or PowerPoint file with its .docx, .xlsx or .pptx extension; else unpack it |
      | notes.txt   | b'PK\x03\x04 word/document.xml <w:t>High tide</w:t>'    | a zip archive (Word, Excel, PowerPoint and OpenDocument files are zip archives) | name a Word, Excel or PowerPoint file with its .docx, .xlsx or .pptx extension; else unpack it |
      | minutes.doc | b'\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 minutes'               | a Word document (.doc)                                                           | save it as .docx, .xlsx or .pptx, or export it as PDF or as text first |
      | legacy      | b'\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 tide table'              | an older Office document (.doc, .xls or .ppt)                                    | save it as .docx, .xlsx or .pptx, or export it as PDF or as text first |
      | chart.tiff  | b'II*\x00 chart'                                         | a TIFF image (.tiff)                                                             | convert it to PNG, JPEG, GIF or WebP first       |
      | backup      | b'\x1f\x8b\x08 tides'                                    | gzip-compressed data                                                             | unpack it and name the files inside, one per job |
      | clip        | b'\x00\x00\x00\x18ftypmp42'                              | an MP4 or QuickTime video, or a HEIF image                                       | send what it holds as one of those instead       |
      | memo        | b'RIFF\x24\x00\x00\x00WAVEfmt '                          | a WAV audio file                                                                 | send what it holds as one of those instead       |
      | film        | b'RIFF\x24\x00\x00\x00AVI LIST'                          | an AVI video                                                                     | send what it holds as one of those instead       |

  Scenario: A JSONL line naming a damaged Word document is refused by line, with the converter's reason, before anything is sent
    Given "minutes.docx" in the input folder is the bytes b'PK\x03\x04 word/document.xml <w:t>Minutes</w:t>'
    And the input file "jobs.jsonl" holds:
      """
      {"prompt": "Summarise the minutes", "file": "minutes.docx"}
      """
    When the jobs are loaded from "jobs.jsonl"
    Then the input is refused with:
      """
      jobs.jsonl, line 1: file 'minutes.docx' is a Word document (.docx) that could not be converted to text: File is not a zip file
      """

  Scenario Outline: An input file that is not text at all is refused by its first bytes
    Given the input file "<name>" holds the bytes <bytes>
    When the jobs are loaded from <how>
    Then the input is refused with:
      """
      <name>: is <what>, not <kind> text; export the data as <kind> (UTF-8) and load that
      """

    Examples:
      | name       | bytes                                   | how                                           | what                                                                             | kind  |
      | rows.jsonl | b'PK\x03\x04 xl/worksheets/sheet1.xml'   | "rows.jsonl"                                  | a zip archive (Word, Excel, PowerPoint and OpenDocument files are zip archives) | JSONL |
      | rows.csv   | b'%PDF-1.7\n%\xe2\xe3\xcf\xd3\n'           | the CSV "rows.csv" with the template "{row}" | a PDF                                                                            | CSV   |

  Scenario Outline: Sizes are checked against the API's limits before a file is read
    Given "<name>" in the input folder is <content>
    When the block for "<name>" is built
    Then the input is refused with:
      """
      <name>: <reason>
      """

    Examples:
      | name      | content                        | reason                                                                                                                                      |
      | big.png   | a PNG image of 3932161 bytes   | is 3,932,161 bytes (5,242,884 once base64-encoded), over the API's limit of 5,242,880 bytes (5 MB) per image; scale it down or re-encode it |
      | big.webp  | a WebP image of 6 MB           | is 6,291,456 bytes (8,388,608 once base64-encoded), over the API's limit of 5,242,880 bytes (5 MB) per image; scale it down or re-encode it |
      | big.pdf   | a PDF of 25 MB                 | is 26,214,400 bytes (34,952,536 once base64-encoded), over the API's limit of 33,554,432 bytes (32 MB) per request; split it into smaller PDFs |
      | big.txt   | text of 33 MB                  | is 34,603,008 bytes, over the API's limit of 33,554,432 bytes (32 MB) per request; split it into smaller files                             |

  Scenario: A file whose name the system cannot take is refused with the system's reason
    When the block for a file whose name is 300 characters long is built
    Then the input error ends with ": cannot be read: File name too long"

  Scenario: A file can be inspected without reading it, and a missing one is refused
    Given "a.pdf" in the input folder is a PDF of 2 MB
    When "a.pdf" is inspected
    Then it is a "pdf" of type "application/pdf" and 2097152 bytes
    When "gone.png" is inspected
    Then the input is refused with:
      """
      gone.png: does not exist
      """

  Scenario: An image whose base64 data is exactly 5 MB is accepted
    Given "edge.png" in the input folder is a PNG image of 3932160 bytes
    When the block for "edge.png" is built
    Then the block is an image holding the bytes of "edge.png" in base64 as "image/png"
    And the block's base64 data is 5242880 bytes long

  Scenario: A file that changed kind since it was loaded is refused when its block is built
    Given "scans/a.pdf" in the input folder is a PDF
    And the input file "jobs.jsonl" holds:
      """
      {"prompt": "Summarise", "file": "scans/a.pdf"}
      """
    When the jobs are loaded from "jobs.jsonl"
    And "scans/a.pdf" in the input folder is replaced by a PNG image
    And the messages for job 0 are built, with citations by default
    Then the input is refused with:
      """
      {folder}/scans/a.pdf: has the .pdf extension but holds a PNG image; rename it to end in .png
      """

  # -- the messages of a job --------------------------------------------------------------------------------------

  Scenario: A prompt with a file sends the file first, then the prompt, in one user turn
    Given "scans/a.pdf" in the input folder is a PDF
    And the input file "jobs.jsonl" holds:
      """
      {"prompt": "Summarise this lease", "file": "scans/a.pdf"}
      """
    When the jobs are loaded from "jobs.jsonl"
    And the messages for job 0 are built, with citations by default
    Then the messages are one user turn holding a document block of "scans/a.pdf", then the text "Summarise this lease"

  Scenario: A prompt alone is sent as the text of one user turn, and a conversation as it was given
    Given the input file "jobs.jsonl" holds:
      """
      {"prompt": "What is a spring tide?"}
      {"messages": [{"role": "user", "content": "Name a tide."}, {"role": "assistant", "content": "Neap."}, {"role": "user", "content": [{"type": "text", "text": "Another?"}]}]}
      """
    When the jobs are loaded from "jobs.jsonl"
    And the messages for job 0 are built, with citations by default
    Then the messages are:
      """
      [{"role": "user", "content": "What is a spring tide?"}]
      """
    When the messages for job 1 are built, with citations by default
    Then the messages are:
      """
      [{"role": "user", "content": "Name a tide."}, {"role": "assistant", "content": "Neap."}, {"role": "user", "content": [{"type": "text", "text": "Another?"}]}]
      """

  Scenario Outline: A job's own citations setting wins over the run's default
    Given "a.pdf" in the input folder is a PDF
    And the input file "jobs.jsonl" holds:
      """
      {"prompt": "Summarise", "file": "a.pdf"<job setting>}
      """
    When the jobs are loaded from "jobs.jsonl"
    And the messages for job 0 are built, <default>
    Then the document block <asks>

    Examples:
      | job setting         | default                        | asks                           |
      |                     | with citations by default      | asks for citations             |
      |                     | without citations by default   | does not ask for citations     |
      | , "citations": true | without citations by default   | asks for citations             |
      | , "citations": false | with citations by default     | does not ask for citations     |

  # -- JSONL ------------------------------------------------------------------------------------------------------

  Scenario: Each line of a JSONL file becomes a job; files are found relative to the JSONL file's folder
    Given "inputs/scans/a.pdf" in the input folder is a PDF
    And "scans/a.pdf" in the input folder is a PDF
    And "elsewhere/b.png" in the input folder is a PNG image
    And the input file "inputs/jobs.jsonl" holds:
      """
      {"prompt": "Summarise", "file": "scans/a.pdf", "id": "lease-a"}

      {"messages": [{"role": "user", "content": "Hi"}], "id": 7, "model": "claude-haiku-4-5", "max_tokens": 200, "system": "Be brief.", "temperature": 0.2}
      {"prompt": "Describe the chart", "file": "{folder}/elsewhere/b.png", "citations": false, "top_k": 5, "stop_sequences": ["END"]}
      """
    When the jobs are loaded from "inputs/jobs.jsonl"
    Then the jobs are:
      | id      | prompt             | messages | file               | citations | overrides                                                                                 |
      | lease-a | Summarise          |          | inputs/scans/a.pdf |           |                                                                                           |
      | 7       |                    | 1 turn   |                    |           | {"max_tokens": 200, "model": "claude-haiku-4-5", "system": "Be brief.", "temperature": 0.2} |
      |         | Describe the chart |          | elsewhere/b.png    | false     | {"stop_sequences": ["END"], "top_k": 5}                                                   |

  Scenario: A byte order mark and Windows line ends are fine in a JSONL file
    Given the input file "jobs.jsonl" holds, after a byte order mark and with Windows line ends:
      """
      {"prompt": "First"}
      {"prompt": "Second"}
      """
    When the jobs are loaded from "jobs.jsonl"
    Then the jobs are:
      | prompt |
      | First  |
      | Second |

  Scenario Outline: A line that cannot become a job is refused with its line number
    Given "a.pdf" in the input folder is a PDF
    And the input file "jobs.jsonl" holds a good line, then:
      """
      <line>
      """
    When the jobs are loaded from "jobs.jsonl"
    Then the input is refused with:
      """
      jobs.jsonl, line 2: <reason>
      """

    Examples:
      | line                                                   | reason                                                                          |
      | {"prompt": "x",                                        | is not valid JSON: Expecting property name enclosed in double quotes (column 16) |
      | ["Summarise"]                                          | is a JSON array, not an object such as {"prompt": "..."}                         |
      | "Summarise"                                            | is a JSON string, not an object such as {"prompt": "..."}                        |
      | 42                                                     | is a JSON number, not an object such as {"prompt": "..."}                        |
      | true                                                   | is a JSON boolean, not an object such as {"prompt": "..."}                       |
      | null                                                   | is a JSON null, not an object such as {"prompt": "..."}                          |
      | {"prompt": "x", "max_tokens": 0}                       | max_tokens: Input should be greater than or equal to 1                          |
      | {"prompt": "x", "temperature": "warm"}                 | temperature: Input should be a valid number, unable to parse string as a number |
      | {"prompt": "x", "messages": [{"role": "user", "content": "y"}]} | give either messages, or a prompt (with a file if you like), not both  |
      | {"id": "lonely"}                                       | give a prompt or messages                                                       |
      | {"file": "a.pdf"}                                      | give a prompt or messages: a file needs a prompt saying what to do with it      |
      | {"prompt": "   "}                                      | prompt: the prompt is empty; the API needs some text to answer                  |
      | {"prompt": "x", "file": 3}                             | file: expected a path as a string, got 3                                        |
      | {"prompt": "x", "id": ["a"]}                           | id: Input should be a valid string                                              |
      | {"messages": [{"role": "robot", "content": "hi"}]}     | messages.0.role: Input should be 'user' or 'assistant'                          |
      | {"messages": []}                                       | messages: List should have at least 1 item after validation, not 0              |
      | {"prompt": "x", "file": "missing.pdf"}                 | file 'missing.pdf' does not exist (looked for {folder}/missing.pdf)             |
      | {"prompt": "x", "file": "a.pdf", "id": "first"}        | the id 'first' is already used on line 1; ids must be unique                    |

  Scenario: An unknown key is refused by name, with the keys a line may hold
    Given the input file "jobs.jsonl" holds:
      """
      {"prompt": "x", "temprature": 0.5, "colour": "blue"}
      """
    When the jobs are loaded from "jobs.jsonl"
    Then the input is refused with:
      """
      jobs.jsonl, line 1: unknown keys 'colour', 'temprature' (did you mean 'temperature'?); use prompt, messages, file, id, citations and the Messages parameters cache_control, max_tokens, metadata, model, output_config, provider_options, stop_sequences, system, temperature, thinking, tool_choice, tools, top_k, top_p
      """

  Scenario: Every line is checked, and the first five problems are reported together
    Given the input file "jobs.jsonl" holds:
      """
      {"prompt": "fine"}
      not json
      {"prompt": "x", "max_tokens": -1}
      {"prompt": "fine too"}
      {"prompt": "x", "file": "gone.pdf"}
      {"prompt": "x", "tempreture": 1}
      [1]
      {"prompt": ""}
      {"model": "claude-haiku-4-5"}
      """
    When the jobs are loaded from "jobs.jsonl"
    Then the input is refused with:
      """
      jobs.jsonl: 7 problems, nothing was sent:
        line 2: is not valid JSON: Expecting value (column 1)
        line 3: max_tokens: Input should be greater than or equal to 1
        line 5: file 'gone.pdf' does not exist (looked for {folder}/gone.pdf)
        line 6: unknown key 'tempreture' (did you mean 'temperature'?); use prompt, messages, file, id, citations and the Messages parameters cache_control, max_tokens, metadata, model, output_config, provider_options, stop_sequences, system, temperature, thinking, tool_choice, tools, top_k, top_p
        line 7: is a JSON array, not an object such as {"prompt": "..."}
        ... and 2 more
      """
    And the input error counts 7 problems and shows 5

  Scenario Outline: An input with no jobs in it, or no input at all, is refused
    Given the input file "jobs.jsonl" holds:
      """
      <text>
      """
    When the jobs are loaded from "<name>"
    Then the input is refused with:
      """
      <name>: <reason>
      """

    Examples:
      | text                | name          | reason                                                                   |
      |                     | jobs.jsonl    | holds no jobs; write one JSON object a line, such as {"prompt": "..."}   |
      | {"prompt": "x"}     | other.jsonl   | does not exist                                                           |
      | {"prompt": "x"}     | .             | is a folder; name the input file itself                                  |

  Scenario: An input file whose name the system cannot take is refused with the system's reason
    When the jobs are loaded from a file whose name is 300 characters long
    Then the input error ends with ": cannot be read: File name too long"

  Scenario: A line that is not UTF-8 is refused with its line number and the byte at fault
    Given the input file "jobs.jsonl" holds the bytes b'{"prompt": "fine"}\n{"prompt": "caf\xe9"}\n'
    When the jobs are loaded from "jobs.jsonl"
    Then the input is refused with:
      """
      jobs.jsonl, line 2: is not UTF-8 (the byte 0xe9 at column 16); save the file as UTF-8
      """

  # -- Message Batches requests -----------------------------------------------------------------------------------

  Scenario: A JSONL file of Message Batches requests: each custom_id becomes the job's id, its params the messages and overrides
    Given the input file "requests.jsonl" holds:
      """
      {"custom_id": "tide-1", "params": {"model": "claude-haiku-4-5", "max_tokens": 100, "system": "Be brief.", "messages": [{"role": "user", "content": "When is high water?"}]}}

      {"custom_id": "tide-2", "params": {"messages": [{"role": "user", "content": "Name a tide."}, {"role": "assistant", "content": "Neap."}, {"role": "user", "content": "Another?"}], "temperature": 0.2}}
      """
    When the jobs are loaded from "requests.jsonl"
    Then the jobs are:
      | id     | prompt | messages | file | overrides                                                           |
      | tide-1 |        | 1 turn   |      | {"max_tokens": 100, "model": "claude-haiku-4-5", "system": "Be brief."} |
      | tide-2 |        | 3 turns  |      | {"temperature": 0.2}                                                |
    When the messages for job 1 are built, with citations by default
    Then the messages are:
      """
      [{"role": "user", "content": "Name a tide."}, {"role": "assistant", "content": "Neap."}, {"role": "user", "content": "Another?"}]
      """

  Scenario Outline: A request line that cannot become a job is refused with its line number, as a job's line is
    Given the input file "requests.jsonl" holds:
      """
      {"custom_id": "first", "params": {"max_tokens": 50, "messages": [{"role": "user", "content": "Hi"}]}}
      <line>
      """
    When the jobs are loaded from "requests.jsonl"
    Then the input is refused with:
      """
      requests.jsonl, line 2: <reason>
      """

    Examples:
      | line                                                                                              | reason |
      | {"prompt": "Hi"}                                                                                  | is a job such as {"prompt": "..."}, but line 1 is a batch request such as {"custom_id": "...", "params": {...}}; every line of an input must have the same shape |
      | {"custom_id": "a b", "params": {"messages": [{"role": "user", "content": "Hi"}]}}                   | custom_id: expected 1 to 64 letters, digits, '-' or '_' (the API's rule), got "a b" |
      | {"params": {"messages": [{"role": "user", "content": "Hi"}]}}                                      | custom_id: expected 1 to 64 letters, digits, '-' or '_' (the API's rule), got nothing |
      | {"custom_id": "first", "params": {"messages": [{"role": "user", "content": "Hi"}]}}               | the id 'first' is already used on line 1; ids must be unique |
      | {"custom_id": "b"}                                                                                 | params: expected an object of Messages parameters, got nothing |
      | {"custom_id": "b", "params": [1]}                                                                  | params: expected an object of Messages parameters, got a JSON array |
      | {"custom_id": "b", "params": {"max_tokens": 10}}                                                   | params: no messages; a batch request's params hold the messages to send |
      | {"custom_id": "b", "params": {"service_tier": "auto", "messages": [{"role": "user", "content": "Hi"}]}} | params: unknown Messages parameter 'service_tier'; use the Messages parameters cache_control, max_tokens, metadata, model, output_config, provider_options, stop_sequences, system, temperature, thinking, tool_choice, tools, top_k, top_p |
      | {"custom_id": "b", "params": {"max_tokens": 0, "messages": [{"role": "user", "content": "Hi"}]}}   | params.max_tokens: Input should be greater than or equal to 1 |
      | {"custom_id": "b", "params": {"messages": [{"role": "robot", "content": "Hi"}]}}                   | params.messages.0.role: Input should be 'user' or 'assistant' |
      | {"custom_id": "b", "method": "POST", "params": {"messages": [{"role": "user", "content": "Hi"}]}}  | unknown key 'method'; a batch request holds custom_id and params |

  Scenario: A job line first makes every later line a job line
    Given the input file "jobs.jsonl" holds:
      """
      {"prompt": "Hi"}
      {"custom_id": "b", "params": {"messages": [{"role": "user", "content": "Hi"}]}}
      """
    When the jobs are loaded from "jobs.jsonl"
    Then the input is refused with:
      """
      jobs.jsonl, line 2: is a batch request such as {"custom_id": "...", "params": {...}}, but line 1 is a job such as {"prompt": "..."}; every line of an input must have the same shape
      """

  # -- streams (standard input) -----------------------------------------------------------------------------------

  Scenario: JSONL read from a text stream gives the jobs a file would, files named relative to the working directory
    Given "scans/a.pdf" in the input folder is a PDF
    When the jobs are loaded from a text stream named "<stdin>" holding, after a byte order mark:
      """
      {"prompt": "Summarise", "file": "scans/a.pdf", "id": "lease-a"}

      {"prompt": "What is a spring tide?", "max_tokens": 50}
      """
    Then the jobs are:
      | id      | prompt                 | file        | overrides           |
      | lease-a | Summarise              | scans/a.pdf |                     |
      |         | What is a spring tide? |             | {"max_tokens": 50} |

  Scenario: A Message Batches file read from a binary stream, its files found from the folder given
    When the jobs are loaded from a binary stream named "-" holding:
      """
      {"custom_id": "q-1", "params": {"messages": [{"role": "user", "content": "Hi"}]}}
      """
    Then the jobs are:
      | id  | messages |
      | q-1 | 1 turn   |

  Scenario Outline: What is wrong with a stream is reported under the name it was given
    When the jobs are loaded from a <kind> stream named "<name>" holding <content>
    Then the input is refused with:
      """
      <message>
      """

    Examples:
      | kind   | name    | content                                                       | message |
      | text   | <stdin> | the lines '{"prompt": "fine"}\n' and '{"prompt": "x", "temprature": 1}\n'  | <stdin>, line 2: unknown key 'temprature' (did you mean 'temperature'?); use prompt, messages, file, id, citations and the Messages parameters cache_control, max_tokens, metadata, model, output_config, provider_options, stop_sequences, system, temperature, thinking, tool_choice, tools, top_k, top_p |
      | binary | -       | the bytes b'{"prompt": "fine"}\n{"prompt": "caf\xe9"}\n'            | -, line 2: is not UTF-8 (the byte 0xe9 at column 16); save the file as UTF-8 |
      | UTF-8  | <stdin> | the bytes b'{"prompt": "fine"}\n{"prompt": "caf\xe9"}\n'            | <stdin>: cannot be read as UTF-8: the byte 0xe9 is not valid UTF-8; save the input as UTF-8 (or read it as bytes, so that the line is named) |
      | binary | upload  | the bytes b'PK\x03\x04 word/document.xml'                         | upload: is a zip archive (Word, Excel, PowerPoint and OpenDocument files are zip archives), not JSONL text; export the data as JSONL (UTF-8) and load that |
      | text   | <stdin> | nothing                                                       | <stdin>: holds no jobs; write one JSON object a line, such as {"prompt": "..."} |

  Scenario: A text stream that stops decoding after some lines says after which one
    When the jobs are loaded from a UTF-8 stream named "<stdin>" holding 3000 good lines, then the bytes b'{"prompt": "caf\xe9"}\n'
    Then the input is refused, saying it cannot be read as UTF-8 after a line before the bad one:
      """
      <stdin>: cannot be read as UTF-8 after line {line}: the byte 0xe9 is not valid UTF-8; save the input as UTF-8 (or read it as bytes, so that the line is named)
      """

  # -- CSV --------------------------------------------------------------------------------------------------------

  Scenario: Each row of a CSV file becomes a job, its prompt the template filled in with the row's cells
    Given "inputs/docs/lease.pdf" in the input folder is a PDF
    And "docs/lease.pdf" in the input folder is a PDF
    And the input file "inputs/leases.csv" holds, after a byte order mark:
      """
      ref,tenant,berth,document
      L1,"Harbour Co, Ltd",North 3,docs/lease.pdf

      L2,Tidewater,"South
      pier",
      """
    When the jobs are loaded from the CSV "inputs/leases.csv" with the template "Summarise the lease of {tenant} at {berth!r}", file column "document" and id column "ref"
    Then the jobs are:
      | id | prompt                                             | file                  |
      | L1 | Summarise the lease of Harbour Co, Ltd at 'North 3' | inputs/docs/lease.pdf |
      | L2 | Summarise the lease of Tidewater at 'South\npier'  |                       |

  Scenario Outline: CSV read from a stream gives the jobs a file would, files named relative to the folder given
    Given "inputs/docs/lease.pdf" in the input folder is a PDF
    When the jobs are loaded from the CSV <kind> stream named "<stdin>", with files relative to "inputs", the template "Summarise {tenant}", file column "document" and id column "ref", holding:
      """
      ref,tenant,document
      L1,"Harbour Co, Ltd",docs/lease.pdf
      L2,Tidewater,
      """
    Then the jobs are:
      | id | prompt                     | file                  |
      | L1 | Summarise Harbour Co, Ltd  | inputs/docs/lease.pdf |
      | L2 | Summarise Tidewater        |                       |

    Examples:
      | kind   |
      | text   |
      | binary |

  Scenario: A CSV without file or id columns gives jobs of the template alone
    Given the input file "questions.csv" holds:
      """
      topic
      neap tides
      """
    When the jobs are loaded from the CSV "questions.csv" with the template "Explain {topic} in one sentence. Use {{braces}} literally."
    Then the jobs are:
      | id | prompt                                                      | file |
      |    | Explain neap tides in one sentence. Use {braces} literally. |      |

  Scenario: Columns the template and options name, and the header lacks, are listed with the columns there are
    Given the input file "leases.csv" holds:
      """
      ref,tenant,document
      L1,Tidewater,a.pdf
      """
    When the jobs are loaded from the CSV "leases.csv" with the template "Summarise {tennant}'s lease, {tenant}", file column "documents" and id column "id"
    Then the input is refused with:
      """
      leases.csv: 3 problems, nothing was sent:
        line 1: the template names the column 'tennant', which is not in the header (did you mean 'tenant'?); it has 'ref', 'tenant', 'document'
        line 1: file_column names the column 'documents', which is not in the header (did you mean 'document'?); it has 'ref', 'tenant', 'document'
        line 1: id_column names the column 'id', which is not in the header; it has 'ref', 'tenant', 'document'
      """

  Scenario: Rows are checked and reported by line, the header being line 1
    Given "a.pdf" in the input folder is a PDF
    And the input file "leases.csv" holds:
      """
      ref,tenant,document
      L1,Tidewater,a.pdf
      L2,"Quay
      Holdings",gone.pdf
      L3,Tidewater
      L4,,a.pdf
      L1,Harbour Co,
      L6,Slipway,a.pdf,extra
      """
    When the jobs are loaded from the CSV "leases.csv" with the template "Summarise {tenant}'s lease", file column "document" and id column "ref"
    Then the input is refused with:
      """
      leases.csv: 4 problems, nothing was sent:
        line 3: file 'gone.pdf' does not exist (looked for {folder}/gone.pdf)
        line 5: has 2 cells but the header has 3 columns; quote cells that hold commas or newlines
        line 7: the id 'L1' is already used on line 2; ids must be unique
        line 8: has 4 cells but the header has 3 columns; quote cells that hold commas or newlines
      """

  Scenario Outline: A template that cannot be filled in is refused
    Given the input file "prices.csv" holds:
      """
      item,price
      rope,12
      """
    When the jobs are loaded from the CSV "prices.csv" with the template "<template>"
    Then the input is refused with:
      """
      prices.csv<where>: <reason>
      """

    Examples:
      | template           | where    | reason                                                                                        |
      | Price: {}          |          | the template 'Price: {}' is not usable: the placeholder {} must name a column, like {title} (write {{ and }} for braces) |
      | Price: {price      |          | the template 'Price: {price' is not usable: expected '}' before end of string (write {{ and }} for braces)               |
      | Price: {price:.2f} | , line 2 | the template cannot be filled in from this row: Unknown format code 'f' for object of type 'str'                        |
      | Sell {item.nope}   | , line 2 | the template cannot be filled in from this row: 'str' object has no attribute 'nope'                                    |
      | {price:{width}}    | , line 1 | the template names the column 'width', which is not in the header; it has 'item', 'price'                              |

  Scenario Outline: A CSV with no rows is refused
    Given the input file "empty.csv" holds:
      """
      <text>
      """
    When the jobs are loaded from the CSV "empty.csv" with the template "{note}"
    Then the input is refused with:
      """
      empty.csv: <reason>
      """

    Examples:
      | text | reason                                                                   |
      |      | is empty; it needs a header row naming its columns, then one row per job |
      | note | has a header but no rows; add one row per job                            |

  Scenario: A CSV file of no bytes at all is refused
    Given the input file "empty.csv" holds the bytes b''
    When the jobs are loaded from the CSV "empty.csv" with the template "{note}"
    Then the input is refused with:
      """
      empty.csv: is empty; it needs a header row naming its columns, then one row per job
      """

  Scenario: A row whose prompt comes out empty is refused
    Given the input file "notes.csv" holds:
      """
      note
      " "
      Check the moorings
      """
    When the jobs are loaded from the CSV "notes.csv" with the template "{note}"
    Then the input is refused with:
      """
      notes.csv, line 2: the template gives an empty prompt for this row; are its cells empty?
      """

  Scenario: A CSV that is not UTF-8 is refused with the line of the first bad byte
    Given the input file "leases.csv" holds the bytes b'ref,tenant\nL1,Caf\xe9 du Port\n'
    When the jobs are loaded from the CSV "leases.csv" with the template "{tenant}"
    Then the input is refused with:
      """
      leases.csv, line 2: is not UTF-8 (the byte 0xe9); save the file as UTF-8
      """

  Scenario Outline: What is wrong with a CSV stream is reported under the name it was given
    When the jobs are loaded from the CSV <kind> stream named "<stdin>" with the template "{review}", holding <content>
    Then the input is refused with:
      """
      <message>
      """

    Examples:
      | kind   | content                                   | message |
      | text   | the lines 'id,review\n' and 'r1,\n'        | <stdin>, line 2: the template gives an empty prompt for this row; are its cells empty? |
      | text   | the lines '%PDF-1.7\n' and 'x\n'           | <stdin>: is a PDF, not CSV text; export the data as CSV (UTF-8) and load that |
      | binary | the bytes b'review\nfine\ncaf\xe9\n'        | <stdin>, line 3: is not UTF-8 (the byte 0xe9); save the file as UTF-8 |
      | UTF-8  | the bytes b'review\nfine\ncaf\xe9\n'        | <stdin>: cannot be read as UTF-8: the byte 0xe9 is not valid UTF-8; save the input as UTF-8 (or read it as bytes, so that the line is named) |
      | text   | nothing                                   | <stdin>: is empty; it needs a header row naming its columns, then one row per job |

  Scenario: A CSV header that names a column twice is refused
    Given the input file "leases.csv" holds:
      """
      ref,tenant,ref
      L1,Tidewater,L2
      """
    When the jobs are loaded from the CSV "leases.csv" with the template "{tenant}"
    Then the input is refused with:
      """
      leases.csv, line 1: the header names 'ref' more than once; rename them
      """

  Scenario: A cell may hold a whole document, far beyond the csv module's default limit
    Given the input file "essays.csv" holds a header "essay" and one cell of 300000 characters
    When the jobs are loaded from the CSV "essays.csv" with the template "Grade this essay: {essay}"
    Then 1 job is loaded, whose prompt is 300018 characters long

  Scenario Outline: A CSV cell over 32 MB is refused, since no request could hold it
    Given the input file "essays.csv" holds <layout>
    When the jobs are loaded from the CSV "essays.csv" with the template "Grade this essay: {essay}"
    Then the input is refused with:
      """
      essays.csv, line <line>: cannot be read as CSV: field larger than field limit (33554432)
      """

    Examples:
      | layout                                                    | line |
      | a header "essay" and one cell of 33554433 characters      | 2    |
      | a header of 33554433 characters                           | 1    |

  # -- many jobs --------------------------------------------------------------------------------------------------

  Scenario: Loading 20,000 lines that name a large PDF reads no file contents; the block is read when it is built
    Given "scans/big.pdf" in the input folder is a PDF of 20 MB
    And the input file "jobs.jsonl" holds 20000 lines, each asking to summarise "scans/big.pdf"
    When the jobs are loaded from "jobs.jsonl"
    Then 20000 jobs are loaded, each holding the path of "scans/big.pdf" and no bytes
    When "scans/big.pdf" in the input folder is replaced by a PDF
    And the messages for job 19999 are built, with citations by default
    Then the messages are one user turn holding a document block of "scans/big.pdf", then the text "Summarise item 19999"

  # -- jobs made in code ------------------------------------------------------------------------------------------

  Scenario: Jobs made in code are checked as loaded ones are, numbered by their index
    Given "a.pdf" in the input folder is a PDF
    When these jobs made in code are checked:
      | prompt    | file     | id |
      | Summarise | a.pdf    | x  |
      | Summarise | gone.pdf | y  |
      | Hello     |          | x  |
    Then the input is refused with:
      """
      jobs: 2 problems, nothing was sent:
        job 1: file 'gone.pdf' does not exist
        job 2: the id 'x' is already used on job 0; ids must be unique
      """

  Scenario: Jobs made in code that are fine pass the check
    Given "a.pdf" in the input folder is a PDF
    When these jobs made in code are checked:
      | prompt    | file  | id |
      | Summarise | a.pdf | x  |
      | Summarise | a.pdf | y  |
    Then the jobs passed the check

  Scenario: An empty list of jobs is refused
    When these jobs made in code are checked:
      | prompt | file | id |
    Then the input is refused with:
      """
      jobs: there are no jobs to run
      """

  Scenario Outline: A job made in code with a bad override is refused by name
    When a job is made in code with the prompt "Hi" and the overrides <overrides>
    Then making the job failed, saying "<reason>"

    Examples:
      | overrides                      | reason                                                                   |
      | {"temprature": 0.5}            | unknown Messages parameter 'temprature' (did you mean 'temperature'?)    |
      | {"max_tokens": "many"}         | max_tokens: Input should be a valid integer                              |
      | {"messages": []}               | unknown Messages parameter 'messages'                                    |
