Feature: Documents, images and citations
  As a developer who sends PDFs, text documents and images to an actor
  I want the emulator to check them and cite documents as the Messages API does, and lowtide to tell me which
  citations back which field of a structured answer
  So that I can test document work offline, and trust each field of an answer only as far as a document supports it

  Rule: Images and documents are checked as the API checks them

    Scenario Outline: An invalid image or document block is refused with the API's error
      Given the emulator runs on a manual clock
      When I send the emulator a user turn holding <block>
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "<mention>"

      Examples: images
        | block                                  | mention                                                                                   |
        | a PNG image declared as image/bmp      | messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp' |
        | an image whose data is not base64      | messages.0.content.0.image.source.base64.data: The image data is not valid base64.        |
        | a PNG image declared as image/jpeg     | The image was specified using the image/jpeg media type, but the image appears to be a image/png image |
        | text bytes declared as image/png       | image.source.base64.data: Image does not match the provided media type image/png          |
        | a PNG image 9000 pixels wide           | At least one of the image dimensions exceed max allowed size: 8000 pixels                 |
        | a PNG image of 4 MB                    | image.source.base64: image exceeds 5 MB maximum: 5592408 bytes > 5242880 bytes            |
        | an image with citations enabled        | messages.0.content.0.image.citations: Extra inputs are not permitted                      |
        | an image without a source              | messages.0.content.0.image.source: Field required                                         |
        | an image whose source is a string      | messages.0.content.0.image.source: Input should be a valid dictionary                     |
        | an image whose data is a number        | image.source.base64.data: Input should be a valid string                                  |
        | an image from an ftp URL               | image.source.url.url: Input should be a valid URL with an http or https scheme            |
        | an image whose URL is a number         | image.source.url.url: Input should be a valid string                                      |
        | an image from a file id                | messages.0.content.0.image.source.file.file_id: File 'file_011' not found.               |
        | an image from a video source           | image.source: Input tag 'video' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file' |
        | an image inside a tool result          | messages.2.content.0.tool_result.content.0.image.source.base64.media_type                  |

      Examples: documents
        | block                                  | mention                                                                                   |
        | a PDF whose bytes are not a PDF        | messages.0.content.0.pdf.source.base64.data: The PDF specified was not valid.             |
        | a PDF declared as application/msword   | document.source.base64.media_type: Input should be 'application/pdf'                      |
        | a PDF whose data is a number           | document.source.base64.data: Input should be a valid string                               |
        | a text document declared as text/csv   | document.source.text.media_type: Input should be 'text/plain'                             |
        | a text document whose data is a list   | document.source.text.data: Input should be a valid string                                 |
        | a document of empty custom content     | document.source.content.content: custom content must hold at least one block              |
        | a document of an empty content string  | document.source.content.content: custom content must be non-empty                         |
        | a document whose content is a number   | document.source.content.content: Input should be a valid string or a valid list           |
        | a document whose content holds a PDF   | document.source.content.content.0: custom content blocks must be text or image blocks     |
        | a document whose content has no text   | document.source.content.content.0.text: text content blocks must be non-empty strings     |
        | a document whose content holds a GIF declared as image/png | content.content.1.image.source.base64: The image was specified using the image/png media type |
        | a document from a file id              | messages.0.content.0.document.source.file.file_id: File 'file_011' not found.            |
        | a document from a video source         | document.source: Input tag 'video' found using 'type' does not match any of the expected tags: 'base64', 'text', 'content', 'url', 'file' |
        | a document with a number for a title   | messages.0.content.0.document.title: Input should be a valid string                        |
        | a document with citations "yes"        | messages.0.content.0.document.citations.enabled: Input should be a valid boolean          |
        | a document with citations true         | messages.0.content.0.document.citations: Input should be a valid dictionary               |
        | a document with a citations style      | messages.0.content.0.document.citations.style: Extra inputs are not permitted             |
        | a document with a summary              | messages.0.content.0.document.summary: Extra inputs are not permitted                     |
        | a document inside a tool result        | messages.2.content.0.tool_result.content.0.pdf.source.base64.data: The PDF specified was not valid. |

    Scenario: Citations are enabled on all of a request's documents or on none of them
      Given the emulator runs on a manual clock
      When I send the emulator two text documents, citations enabled on the second only
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "Citations must be enabled on all or none of the documents in a request: messages.0.content.1 enables them but messages.0.content.0 does not."

    Scenario: Citations and structured outputs together are refused, as the API refuses them
      Given the emulator runs on a manual clock
      When I send the emulator a cited text document together with an output format
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "Citations are not supported with structured outputs: messages.0.content.0 enables citations"

    Scenario: In a batch, a request with citations and structured outputs ends errored alone
      Given the emulator runs on a manual clock
      When I create an emulator batch where "both" asks for citations and an output format, and "plain" asks for citations alone
      Then the emulator batch result "both" is errored saying "Citations are not supported with structured outputs"
      And the emulator batch result "plain" succeeded with citations

  Rule: Images are accepted and counted by their pixels, not by their base64

    Scenario Outline: A <kind> image is read from its header and costs its width times its height over 750 tokens
      Given the emulator runs on a manual clock
      When I send the emulator a <kind> image of <width>x<height> pixels, saying "Describe it"
      Then the emulator reply has stop reason "end_turn"
      And the emulator reply used <tokens> input tokens

      Examples:
        | kind      | width | height | tokens |
        | PNG       | 1000  | 500    | 670    |
        | JPEG      | 600   | 400    | 323    |
        | GIF       | 300   | 300    | 123    |
        | WebP      | 750   | 100    | 103    |
        | WebP-VP8  | 200   | 150    | 43     |
        | WebP-VP8L | 400   | 300    | 163    |
        | PNG       | 3000  | 2000   | 1537   |

    Scenario Outline: An image whose header does not give its size is accepted, and costs the most an image can
      Given the emulator runs on a manual clock
      When I send the emulator an image that is a <kind>, saying "Describe it"
      Then the emulator reply has stop reason "end_turn"
      And the emulator reply used 1603 input tokens

      Examples:
        | kind                          |
        | PNG cut short in its header   |
        | JPEG whose segments are broken |
        | JPEG without a frame header   |
        | WebP of an unknown kind       |

    Scenario: An image given by URL is accepted but not fetched, and costs the most an image can
      Given the emulator runs on a manual clock
      When I send the emulator an image from the URL "https://example.com/chart.png", saying "Describe it"
      Then the emulator reply has stop reason "end_turn"
      And the emulator reply used 1603 input tokens

  Rule: The emulated model cites citation-enabled documents in the API's shapes

    Scenario: An answer about a plain-text document cites its sentences by character, the end index exclusive
      Given the emulator runs on a manual clock
      When I send the emulator the text document "Tides" with citations, saying "When is low tide?":
        """
        High tide is at noon. Low tide follows at six!
        The harbour closes at dusk.
        """
      Then the emulator reply's cited blocks are:
        | text                           | type          | cited text                     | document | title | start | end |
        | Low tide follows at six!       | char_location | Low tide follows at six!       | 0        | Tides | 22    | 47  |
        | High tide is at noon.          | char_location | High tide is at noon.          | 0        | Tides | 0     | 22  |
        | The harbour closes at dusk.    | char_location | The harbour closes at dusk.    | 0        | Tides | 47    | 74  |
      And every citation of the emulator reply quotes the text document at the characters it names
      When I stream the same message from the emulator
      Then the streamed message equals the emulator reply except for its id

    Scenario: An answer about a PDF cites its sentences by page, the end page exclusive
      Given the emulator runs on a manual clock
      And a PDF "lease.pdf" with the pages:
        | text                                                    |
        | The tenant is Ann Smith. The lease runs for two years.  |
        | Rent is 900 euros a month. Ann pays for gas.            |
      When I send the emulator "lease.pdf" with citations, saying "What is the rent?"
      Then the emulator reply's cited blocks are:
        | text                          | type          | cited text                     | document | title     | start | end |
        | Rent is 900 euros a month.    | page_location | Rent is 900 euros a month.     | 0        | lease.pdf | 2     | 3   |
        | The tenant is Ann Smith.      | page_location | The tenant is Ann Smith.       | 0        | lease.pdf | 1     | 2   |
        | The lease runs for two years. | page_location | The lease runs for two years.  | 0        | lease.pdf | 1     | 2   |
      And the emulator reply used 3033 input tokens

    Scenario: A compressed PDF is read as well
      Given the emulator runs on a manual clock
      And a Flate-compressed PDF "notice.pdf" saying "Berth 7 is closed for dredging."
      When I send the emulator "notice.pdf" with citations, saying "Which berth is closed?"
      Then the emulator reply's cited blocks are:
        | text                            | type          | cited text                      | document | title      | start | end |
        | Berth 7 is closed for dredging. | page_location | Berth 7 is closed for dredging. | 0        | notice.pdf | 1     | 2   |

    Scenario: A PDF whose text the emulator cannot read is still answered, without citations
      Given the emulator runs on a manual clock
      And a PDF "scan.pdf" of 2 pages whose text the emulator cannot read
      When I send the emulator "scan.pdf" with citations, saying "What does it say?"
      Then the emulator reply has stop reason "end_turn"
      And the emulator reply has no citations
      And the emulator reply used 3007 input tokens

    Scenario: An answer about custom content cites whole blocks, the end block exclusive
      Given the emulator runs on a manual clock
      When I send the emulator custom content with citations, saying "Which buoy is green?":
        | text                 |
        | Buoy 4 is red.       |
        | Buoy 5 is green.     |
      Then the emulator reply's cited blocks are:
        | text             | type                   | cited text       | document | title | start | end |
        | Buoy 5 is green. | content_block_location | Buoy 5 is green. | 0        |       | 1     | 2   |
        | Buoy 4 is red.   | content_block_location | Buoy 4 is red.   | 0        |       | 0     | 1   |

    Scenario: Custom content given as one string is one citable block
      Given the emulator runs on a manual clock
      When I send the emulator the custom content "Buoy 6 is yellow. It blinks." with citations, saying "Which buoy?"
      Then the emulator reply's cited blocks are:
        | text                          | type                   | cited text                    | document | title | start | end |
        | Buoy 6 is yellow. It blinks.  | content_block_location | Buoy 6 is yellow. It blinks.  | 0        |       | 0     | 1   |
      And the emulator reply used 10 input tokens

    Scenario: A document a tool returns is read, cited and counted like any other
      Given the emulator runs on a manual clock
      When I send the emulator a tool result holding the cited text document "Gauge", saying "Thanks":
        """

          The gauge reads four metres.
        """
      Then the emulator reply's cited blocks are:
        | text                         | type          | cited text                   | document | title | start | end |
        | The gauge reads four metres. | char_location | The gauge reads four metres. | 0        | Gauge | 3     | 31  |
      And every citation of the emulator reply quotes the text document at the characters it names

    Scenario: PDFs as other tools write them are read: no catalog, marked content, escapes, hex and Unicode strings
      Given the emulator runs on a manual clock
      And a PDF "minutes.pdf" written without a catalog, with escapes, hex strings and inline images
      And a PDF "agenda.pdf" whose page tree names a missing page, a page twice and a page without content
      When I send the emulator the PDFs "minutes.pdf" and "agenda.pdf" with citations, saying "Which unicode tabs?"
      Then the emulator reply's cited blocks are:
        | text                               | type          | cited text                         | document | title       | start | end |
        | Unicode is known.                  | page_location | Unicode is known.                  | 0        | minutes.pdf | 1     | 2   |
        | Tabs and breaks.                   | page_location | Tabs and breaks.                   | 0        | minutes.pdf | 1     | 2   |
        | Escaped (parens) and ABC octal.    | page_location | Escaped (parens) and ABC octal.    | 0        | minutes.pdf | 1     | 2   |
      And the emulator reads the pages of the PDFs as:
        | document    | page | text                                                                                                   |
        | minutes.pdf | 1    | Escaped (parens) and ABC octal. Hex text is read too. Continued line. Unicode is known. Tabs and breaks. Spaced words. Odd hex (really) ends this. |
        | minutes.pdf | 2    |                                                                                                        |
        | minutes.pdf | 3    | Last page, compressed. Stop.                                                                           |
        | agenda.pdf  | 1    | First item.                                                                                            |
        | agenda.pdf  | 2    |                                                                                                        |
        | agenda.pdf  | 3    | Third item.                                                                                            |

    Scenario: Documents are numbered across the request, and a URL document is accepted but cannot be quoted
      Given the emulator runs on a manual clock
      When I send the emulator a URL document and the text document "Rules" with citations, saying "Speed limit?":
        """
        The speed limit is five knots.
        """
      Then the emulator reply's cited blocks are:
        | text                           | type          | cited text                     | document | title | start | end |
        | The speed limit is five knots. | char_location | The speed limit is five knots. | 1        | Rules | 0     | 30  |

    Scenario: Without citations, documents are read but the answer cites nothing
      Given the emulator runs on a manual clock
      When I send the emulator the text document "Tides" without citations, saying "When is high tide?":
        """
        High tide is at noon.
        """
      Then the emulator reply text starts with 'Emulated reply to "When is high tide?": '
      And the emulator reply has no citations
      And the emulator reply used 13 input tokens

  Rule: A JSON schema in the system prompt is answered with JSON, quoting and citing the documents

    Scenario: The answer is an instance of the schema, as text
      Given the emulator runs on a manual clock
      When I send the emulator a system prompt asking for a Berth as JSON, saying "Describe berth 7"
      Then the emulator reply is one text block of JSON, a valid Berth

    Scenario: With cited documents, each string of the JSON is a quoted sentence in a block carrying its citation
      Given the emulator runs on a manual clock
      When I send the emulator the text document "Harbour" with citations and a system prompt asking for a Berth as JSON:
        """
        Berth 7 is twelve metres deep. It takes tankers. Cranes work there by day.
        """
      Then the emulator reply is JSON for a valid Berth whose every free-text string is a block of its own, citing a sentence that holds it
      And the Berth's strings too short or too long for a sentence are:
        | field   | value                     |
        | code    | code                      |
        | summary | Cranes work there by day. |

    Scenario: A broken schema in the system prompt is not taken for one
      Given the emulator runs on a manual clock
      When I send the emulator the system prompt "Answer as <json_schema>{not json</json_schema>", saying "Hi"
      Then the emulator reply text starts with 'Emulated reply to "Hi": '

  Rule: lowtide asks for a structured answer from cited documents in the prompt, and maps citations onto its fields

    Scenario Outline: A structured answer about a cited PDF comes with the citations that back each field
      Given an emulated Anthropic API whose batches take 60 seconds
      And an actor "clerk" in <mode> mode
      And a PDF "lease.pdf" with the pages:
        | text                                                    |
        | The tenant is Ann Smith. The lease runs for two years.  |
        | Rent is 900 euros a month. Ann pays for gas.            |
      When the actor is asked "Who is the tenant, and what is the rent?" about "lease.pdf" with citations, for a Lease
      Then the answer came through <mode> mode
      And the parsed Lease is:
        | field      | value                                                    |
        | tenant     | The tenant is Ann Smith.                                 |
        | rent       | Rent is 900 euros a month.                               |
        | term_years | 1                                                        |
        | kind       | residential                                              |
        | clauses    | ['The lease runs for two years.', 'Ann pays for gas.']   |
      And the field citations are:
        | field   | cited text                    | pages |
        | tenant  | The tenant is Ann Smith.      | 1-2   |
        | rent    | Rent is 900 euros a month.    | 2-3   |
        | clauses | The lease runs for two years. | 1-2   |
        | clauses | Ann pays for gas.             | 2-3   |
      And the fields "term_years, kind" have no citations
      And the answer's citations are those of its fields, in the order of its text
      And lowtide asked for the Lease in the system prompt, between json_schema tags, with no output format

      Examples:
        | mode  |
        | live  |
        | batch |

    Scenario: Thinking before a cited structured answer does not shift the citations off their fields
      Given an emulated Anthropic API
      And an actor "clerk" with:
        """
        max_tokens: 4096
        thinking: {type: enabled, budget_tokens: 1024}
        """
      And a PDF "lease.pdf" with the pages:
        | text                                                    |
        | The tenant is Ann Smith. The lease runs for two years.  |
        | Rent is 900 euros a month. Ann pays for gas.            |
      When the actor is asked "Who is the tenant, and what is the rent?" about "lease.pdf" with citations, for a Lease
      Then the response opens with a thinking block, before the text blocks of the answer
      And the field citations are:
        | field   | cited text                    | pages |
        | tenant  | The tenant is Ann Smith.      | 1-2   |
        | rent    | Rent is 900 euros a month.    | 2-3   |
        | clauses | The lease runs for two years. | 1-2   |
        | clauses | Ann pays for gas.             | 2-3   |

    Scenario: The schema instruction follows the actor's own system prompt, as text or as blocks
      Given an actor "clerk" with:
        """
        system_prompt: You read leases.
        """
      Then lowtide's params for a Lease about a cited text document have the system prompt "You read leases." followed by the schema instruction
      And lowtide's params for a Lease about a cited text document, with system blocks, end with a block holding the schema instruction

    Scenario: Without citations, a structured answer about a document still uses structured outputs
      Given an emulated Anthropic API
      And an actor "clerk" in live mode
      And a PDF "lease.pdf" with the pages:
        | text                     |
        | The tenant is Ann Smith. |
      When the actor is asked "Who is the tenant?" about "lease.pdf" without citations, for a Lease
      Then the answer came through live mode
      And the answer has no citations and no field citations
      And lowtide asked for the Lease through the output format, leaving the system prompt alone

    Scenario: A structured answer by prompt that does not fit is a StructuredOutputError, as with structured outputs
      Given an emulated Anthropic API
      And an actor "clerk" with:
        """
        max_tokens: 8
        """
      And a PDF "lease.pdf" with the pages:
        | text                     |
        | The tenant is Ann Smith. |
      When the actor is asked "Who is the tenant?" about "lease.pdf" with citations, for a Lease
      Then the call fails with StructuredOutputError
      And the error message contains "The answer does not fit Lease: 1 problem(s); first: (root): Invalid JSON"

    Scenario: An actor that asks for structured outputs itself, with cited documents, gets the API's refusal
      Given an emulated Anthropic API
      And an actor "clerk" with:
        """
        output_config: {format: {type: json_schema, schema: {type: object}}}
        """
      And a PDF "lease.pdf" with the pages:
        | text                     |
        | The tenant is Ann Smith. |
      When the actor is asked "Who is the tenant?" about "lease.pdf" with citations
      Then the call fails with InvalidRequestError
      And the error message contains "Citations are not supported with structured outputs"

    Scenario: A citation backs a field only when its cited text holds the field's value, and fenced JSON is parsed
      Given an answer made of these text blocks:
        | text                                | cites                            |
        | ```json\n{"tenant":                 |                                  |
        | "Ann   SMITH"                       | The tenant is Ann Smith.         |
        | , "rent":                           |                                  |
        | "900 euros"                         | The lease runs for two years.    |
        | , "term_years": 2, "kind":          |                                  |
        | "residential"                       | A residential lease.             |
        | , "clauses": [                      |                                  |
        | "two years"                         | The lease runs for TWO   years.  |
        | ]}\n```                             |                                  |
      When lowtide parses it as a Lease and maps its citations onto the fields
      Then the field citations are:
        | field   | cited text                      | pages |
        | tenant  | The tenant is Ann Smith.        |       |
        | kind    | A residential lease.            |       |
        | clauses | The lease runs for TWO   years. |       |
      And the fields "rent, term_years" have no citations

    Scenario: Fields are backed through the leaves of their objects, and keys the model does not know are left out
      Given an answer made of these text blocks:
        | text                                           | cites                 |
        | {"vessel": "Nordic Star", "findings": {"hull": |                       |
        | "Sound"                                        | The hull was sound.   |
        | , "deck": "worn"}, "note":                     |                       |
        | "The deck was worn"                            | The deck was worn.    |
        | , "inspector":                                 |                       |
        | "K. Lund"                                      | Inspected by K. Lund. |
        | }                                              |                       |
      When lowtide parses it as an Inspection and maps its citations onto the fields
      Then the field citations are:
        | field     | cited text            | pages |
        | findings  | The hull was sound.   |       |
        | inspector | Inspected by K. Lund. |       |
      And the fields "vessel, note" have no citations

    Scenario Outline: An answer that is not a JSON object maps no citations onto fields
      Given an answer made of these text blocks:
        | text   | cites                    |
        | <text> | The tenant is Ann Smith. |
      When lowtide maps its citations onto the fields of a Lease
      Then the answer has 1 citation and no field citations

      Examples:
        | text                  |
        | Ann Smith             |
        | ["Ann Smith"]         |
        | {"tenant" "Ann Smith"} |
        | {"tenant": Ann Smith} |
