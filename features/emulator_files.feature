Feature: The emulator's Files API, and messages and batches that read uploaded files
  As the author of an agent that uploads a document once and refers to it by file id in many requests
  I want the emulator to keep, list, serve and delete files as the Files API does, and to read them into messages
  So that my agent's file handling is tested offline, failures included, before it meets the real API

  The API serves two shapes: the Files API as it is now (`client.files`), and, to callers that still send the
  `files-api-2025-04-14` beta header, the beta's shapes (`client.beta.files` with that beta).

  Rule: Files are uploaded, described, listed and deleted in the API's shapes

    Scenario: A file uploaded under the beta header is described in the beta's shape, then deleted
      Given the emulator runs on a manual clock
      When I upload "notes.txt" to the emulator as "text/plain" with the files beta, holding "The tide is high at noon."
      Then the emulator file is described as "notes.txt", "text/plain", 25 bytes, not downloadable, without expires_at
      When I retrieve the emulator file's metadata with the files beta
      Then the emulator file is described as "notes.txt", "text/plain", 25 bytes, not downloadable, without expires_at
      When I delete the emulator file
      Then the emulator answered that the file was deleted
      When I retrieve the emulator file's metadata
      Then the emulator call fails with NotFoundError, status 404 and error type "not_found_error"
      And the emulator error message mentions "not found"
      When I delete the emulator file
      Then the emulator call fails with NotFoundError, status 404 and error type "not_found_error"

    Scenario: Without the beta header, a file is described in the current shape, expires_at included
      Given the emulator runs on a manual clock
      When I upload "notes.txt" to the emulator as "text/plain", holding "The tide is high at noon."
      Then the emulator file is described as "notes.txt", "text/plain", 25 bytes, not downloadable, expiring never
      When I retrieve the emulator file's metadata
      Then the emulator file is described as "notes.txt", "text/plain", 25 bytes, not downloadable, expiring never

    Scenario: A file uploaded to expire says when, with the beta header or without
      Given the emulator runs on a manual clock
      When I upload "notes.txt" to the emulator as "text/plain", holding "Low at six.", to expire after 3600 seconds
      Then the emulator file is described as "notes.txt", "text/plain", 11 bytes, not downloadable, expiring 3600 seconds after its creation
      When I retrieve the emulator file's metadata with the files beta
      Then the emulator file is described as "notes.txt", "text/plain", 11 bytes, not downloadable, expiring 3600 seconds after its creation

    Scenario Outline: The stored name is the upload's last path component, and the type as declared, named or seen
      Given the emulator runs on a manual clock
      When I upload to the emulator a file named "<name>", declared as "<declared>", holding <content>
      Then the emulator stored the file as "<stored>" of type "<type>"

      Examples:
        | name                  | declared                 | content        | stored     | type                     |
        | reports/2025/tide.txt | text/plain               | some text      | tide.txt   | text/plain               |
        | C:\docs\report.pdf    | application/octet-stream | a PDF          | report.pdf | application/pdf          |
        | tides.csv             | application/octet-stream | some text      | tides.csv  | text/csv                 |
        |                       | application/octet-stream | a PDF          | unnamed.pdf | application/pdf         |
        |                       | application/octet-stream | a PNG image    | unnamed.png | image/png               |
        |                       | application/octet-stream | some text      | unnamed.txt | text/plain              |
        |                       | application/octet-stream | binary bytes   | unnamed    | application/octet-stream |
        |                       | image/webp               | a PNG image    | unnamed.webp | image/webp             |
        | blob                  | application/octet-stream | binary bytes   | blob       | application/octet-stream |

    Scenario Outline: An upload the API would refuse is refused
      Given the emulator runs on a manual clock and takes files of at most 1000 bytes
      When I post the emulator's files route <upload>
      Then the emulator call fails with <exception>, status <status> and error type "<type>"
      And the emulator error message mentions "<mention>"

      Examples:
        | upload                                   | exception            | status | type                  | mention                                                      |
        | a form without a file                    | BadRequestError      | 400    | invalid_request_error | file: Field required                                         |
        | a form with a purpose field              | BadRequestError      | 400    | invalid_request_error | purpose: Extra inputs are not permitted                      |
        | a file to expire after "soon" seconds    | BadRequestError      | 400    | invalid_request_error | expires_in_seconds: Input should be a valid integer          |
        | a file to expire after "60" seconds      | BadRequestError      | 400    | invalid_request_error | expires_in_seconds: Input should be between 3600 and 7776000 |
        | a file to expire after "7776001" seconds | BadRequestError      | 400    | invalid_request_error | between 3600 and 7776000                                     |
        | a JSON body                              | BadRequestError      | 400    | invalid_request_error | the body must be multipart/form-data, with a boundary        |
        | a file named with 501 characters         | BadRequestError      | 400    | invalid_request_error | at most 500 characters                                       |
        | a file of 1001 bytes                     | ContentTooLargeError | 413    | request_too_large     | maximum allowed size of 1000 bytes                           |
        | a file of 70000 bytes                    | ContentTooLargeError | 413    | request_too_large     | maximum allowed number of bytes                              |

    Scenario Outline: A malformed form is refused, saying what is wrong with it
      Given the emulator runs on a manual clock
      When I send the emulator's files route a raw form <form>
      Then the emulator answers 400 with error type "invalid_request_error"
      And the emulator's raw answer mentions "<mention>"

      Examples:
        | form                                | mention                                           |
        | cut short                           | the body ends before its closing boundary         |
        | whose boundary line runs on         | a boundary line holds more than the boundary      |
        | whose part headers never end        | a part's headers do not end                       |
        | whose part has no name              | Content-Disposition: form-data header with a name |
        | whose part has no headers           | Content-Disposition: form-data header with a name |

  Rule: Listing pages through files as each shape pages them

    Scenario: Without the beta header, the SDK's paginator walks every file once, newest first, by next_page
      Given the emulator runs on a manual clock
      When I upload 5 files to the emulator, one second apart
      And I list the emulator files 2 at a time
      Then the emulator listed all 5 files, newest first
      When I list the emulator files with the ids of the 1st, 3rd and 5th uploads and an unknown one
      Then the emulator listed the 5th, 3rd and 1st uploads, on a single page

    Scenario: With the beta header, pages follow before_id and after_id, and say whether there is more
      Given the emulator runs on a manual clock
      When I upload 5 files to the emulator, one second apart
      And I list one page of 2 emulator files with the files beta
      Then the emulator file page holds the 5th and 4th uploads and has more
      When I list one page of 10 emulator files with the files beta, after the 4th upload
      Then the emulator file page holds the 3rd, 2nd and 1st uploads and has no more
      When I list one page of 2 emulator files with the files beta, before the 2nd upload
      Then the emulator file page holds the 4th and 3rd uploads and has more
      When I list one page of 2 emulator files with the files beta, after the 1st upload
      Then the emulator file page is empty and has no more

    Scenario Outline: List parameters are checked, and each pagination needs its shape
      Given the emulator runs on a manual clock
      When I upload 2 files to the emulator, one second apart
      And I list the emulator files with the query "<query>" <header>
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "<mention>"

      Examples:
        | query                               | header                 | mention                                          |
        | after_id=FIRST                      | without the beta header | before_id and after_id page the Files API only with the anthropic-beta header files-api-2025-04-14 |
        | before_id=FIRST                     | without the beta header | without it, pass the previous page's next_page as page |
        | page=page_bm9wZQ                    | without the beta header | is not a page cursor of this list                |
        | page=cursor                         | without the beta header | is not a page cursor of this list                |
        | page=page_%25%25                    | without the beta header | is not a page cursor of this list                |
        | ids[]=FIRST&limit=5                 | without the beta header | ids cannot be combined with page or limit        |
        | ids[]=FIRST&page=page_x             | without the beta header | ids cannot be combined with page or limit        |
        | 101 ids                             | without the beta header | at most 100 ids may be given, not 101            |
        | limit=0                             | without the beta header | between 1 and 1000                               |
        | page=page_x                         | with the beta header    | page and ids page the Files API without the files-api-2025-04-14 beta header |
        | ids[]=FIRST                         | with the beta header    | with it, page with before_id and after_id        |
        | after_id=FIRST&before_id=FIRST      | with the beta header    | Only one of after_id and before_id               |
        | after_id=file_unknown               | with the beta header    | after_id: no file with id file_unknown           |
        | limit=1001                          | with the beta header    | between 1 and 1000                               |

  Rule: Only files a tool wrote can be downloaded, and only until they expire

    Scenario: A file a tool wrote downloads as its bytes, with its type
      Given the emulator runs on a manual clock
      And a tool wrote the emulator file "chart.csv" holding "port,height\nBrest,6.1\n"
      When I download the emulator file
      Then the emulator served "port,height\nBrest,6.1\n" as "text/csv"
      And the emulator file is described as "chart.csv", "text/csv", 22 bytes, downloadable, expiring never

    Scenario: An uploaded file cannot be downloaded, as the API rules
      Given the emulator runs on a manual clock
      When I upload "notes.txt" to the emulator as "text/plain", holding "The tide is high at noon."
      And I download the emulator file
      Then the emulator refused the download with FileNotDownloadableError, status 400 and error code "file_not_downloadable"
      And the emulator error message mentions "not downloadable"

    Scenario: An expired file's bytes are gone
      Given the emulator runs on a manual clock
      When I upload "notes.txt" to the emulator as "text/plain", holding "Low at six.", to expire after 3600 seconds
      And the emulator clock advances 3600 seconds
      And I download the emulator file
      Then the emulator refused the download with FileExpiredError, status 404 and error code "file_expired"
      When I retrieve the emulator file's metadata
      Then the emulator file is described as "notes.txt", "text/plain", 11 bytes, not downloadable, expiring 3600 seconds after its creation

    Scenario: Downloading a file that does not exist is a 404
      Given the emulator runs on a manual clock
      When I download the emulator file "file_01NoSuchFile"
      Then the emulator call fails with NotFoundError, status 404 and error type "not_found_error"

  Rule: A message or a batch request reads an uploaded file as if its content had been sent

    Scenario Outline: A file read by id costs what the same content sent inline costs
      Given the emulator runs on a manual clock
      When I upload <file> to the emulator
      And I send the emulator a message holding the file as <block>
      And I send the emulator the same message with the file's content inline
      Then both emulator replies counted the same input tokens
      When I count the emulator tokens of the message holding the file as <block>
      Then the emulator token count equals the input of the reply holding the file

      Examples:
        | file               | block                        |
        | a text file        | a document                   |
        | a PDF              | a document                   |
        | a PNG image        | an image                     |
        | a PNG image        | an image in a tool result    |
        | a PNG image        | an image in custom content   |

    Scenario: A cited text file is quoted, and its citations name the file
      Given the emulator runs on a manual clock
      When I upload "tides.txt" to the emulator as "text/plain", holding "The tide is high at noon. It is low at six."
      And I ask the emulator "When is the tide high?" about the file, with citations
      Then the emulator reply quotes "The tide is high at noon." citing the file

    Scenario Outline: A file the block cannot take is refused, naming the file
      Given the emulator runs on a manual clock
      When I upload <file> to the emulator
      And I send the emulator a message holding <reference>
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "<mention>"

      Examples:
        | file                               | reference                                    | mention                                                            |
        | a text file                        | the file id "file_01Missing" as a document   | messages.0.content.0.document.source.file.file_id: File 'file_01Missing' not found. |
        | a text file                        | the file as an image                         | an image block takes a JPEG, PNG, GIF or WebP file                 |
        | a PNG image                        | the file as a document                       | a document block takes a PDF (application/pdf) or a plain text (text/plain) file |
        | a text file that is not UTF-8      | the file as a document                       | is text/plain but not valid UTF-8                                  |
        | a PNG image declared as image/jpeg | the file as an image                         | the image appears to be a image/png image                          |
        | a text file                        | the file as a document with a stray key      | document.source.file.name: Extra inputs are not permitted         |
        | a text file                        | a file source whose id is a number           | document.source.file.file_id: Input should be a valid string       |
        | a text file                        | the file id "file_01Gone" in a tool result   | tool_result.content.0.image.source.file.file_id: File 'file_01Gone' not found |

    Scenario: A deleted or expired file can no longer be read
      Given the emulator runs on a manual clock
      When I upload "notes.txt" to the emulator as "text/plain", holding "Low at six.", to expire after 3600 seconds
      And the emulator clock advances 3600 seconds
      And I send the emulator a message holding the file as a document
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "has expired"
      When I upload "notes.txt" to the emulator as "text/plain", holding "Low at six."
      And I delete the emulator file
      And I send the emulator a message holding the file as a document
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "not found"

    Scenario: A batch request reads the file as it runs, and keeps what it read for its results
      Given the emulator runs on a manual clock with 60 processing seconds
      When I upload "tides.txt" to the emulator as "text/plain", holding "The tide is high at noon. It is low at six."
      And I create an emulator batch asking "When is the tide high?" about the file, and about "file_01Missing"
      And the emulator clock advances 60 seconds
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    | error_type            | message                            |
        | uploaded  | succeeded |                       |                                    |
        | missing   | errored   | invalid_request_error | File 'file_01Missing' not found.   |
      And the emulator result "uploaded" quotes "The tide is high at noon." citing the file
      When I delete the emulator file
      And I fetch the emulator batch results
      Then the emulator result "uploaded" quotes "The tide is high at noon." citing the file

    Scenario: Files, and the files a settled batch read, survive a restart on the state file
      Given the emulator runs on a manual clock with 0 processing seconds and 0 cancel seconds, keeping its state in a file
      When I upload "tides.txt" to the emulator as "text/plain", holding "The tide is high at noon. It is low at six."
      And I create an emulator batch asking "When is the tide high?" about the file, and about "file_01Missing"
      And I fetch the emulator batch results
      And I delete the emulator file
      And I upload "kept.txt" to the emulator as "text/plain", holding "Kept across restarts."
      And the emulator is started again from its state file
      Then the emulator result "uploaded" quotes "The tide is high at noon." citing the first file
      When I retrieve the emulator file's metadata
      Then the emulator file is described as "kept.txt", "text/plain", 21 bytes, not downloadable, expiring never
      When the emulator is reset
      And I retrieve the emulator file's metadata
      Then the emulator call fails with NotFoundError, status 404 and error type "not_found_error"
