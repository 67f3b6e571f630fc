Feature: lowtide serve speaks the Gemini API's generateContent
  As a developer whose program calls Gemini through the google-genai SDK
  I want to point its base URL at lowtide serve
  So that its calls are answered through a batch at batch prices, changing nothing else

  lowtide serve mounts the wire its actor's batch provider serves; here the actor's batch provider is a fake one (in
  memory) that serves Gemini's wire, so that what is seen is the wire: the SDK's requests read into the actor's calls,
  and the actor's answers written back as the API's, over a loopback socket.

  Background:
    Given lowtide serve runs a batch actor of "gemini-2.5-flash" speaking Gemini's API, with client key "local-secret"

  Scenario Outline: A text call through the google-genai SDK is answered through a batch, through either API version
    When the Gemini SDK asks lowtide serve "What is the tide at Brest?" under API version <version>
    Then the Gemini SDK's answer is "tide: What is the tide at Brest?"
    And the answer's finish reason is "STOP", its model version "gemini-2.5-flash" and its response id is set
    And the answer's usage counts 6 prompt tokens, 7 candidate tokens and 13 in total
    And the fake batch API was sent 1 request(s)

    Examples:
      | version |
      | v1beta  |
      | v1      |

  Scenario: The system instruction and the generation config reach the actor's call
    When the Gemini SDK asks lowtide serve "Hello" with
      | setting            | value                 |
      | system_instruction | Answer like a sailor. |
      | temperature        | 0.4                   |
      | top_p              | 0.9                   |
      | top_k              | 20                    |
      | max_output_tokens  | 99                    |
      | stop_sequences     | END                   |
      | seed               | 7                     |
      | thinking_budget    | 0                     |
    Then the Gemini SDK's answer is "tide: Hello"
    And the request the batch carried has the system prompt "Answer like a sailor."
    And the request the batch carried has temperature 0.4, top_p 0.9, top_k 20, max_tokens 99 and stop sequence "END"
    And the request the batch carried has the Gemini option thinking_budget 0
    And the request the batch carried sends the generation config's "seed" as it came

  Scenario: A streamed call is answered with the whole answer in one event, and shares the unstreamed call's answer
    When the Gemini SDK asks lowtide serve "Hello, streamed" streamed
    And the Gemini SDK asks lowtide serve "Hello, streamed"
    Then the stream held 1 chunk, whose text is "tide: Hello, streamed"
    And the Gemini SDK's answer is "tide: Hello, streamed"
    And the fake batch API was sent 1 request(s)

  Scenario: A function declared, called by the model, and answered: the round trip through lowtide serve
    When the Gemini SDK asks lowtide serve "tide at Brest" with the function tide_height declared
    Then the Gemini SDK's answer calls tide_height with {"port": "Brest"}, and the finish reason is "STOP"
    And the request the batch carried has the tool "tide_height" and no tool choice
    When the Gemini SDK sends the function's response {"height_m": 4.2} back with the conversation
    Then the Gemini SDK's answer is "tide: the result was {"height_m":4.2}"
    And the request the batch carried answers the function call with '{"height_m":4.2}'

  Scenario: A function the model must call, named in the function-calling config
    When the Gemini SDK asks lowtide serve "tide at Brest" with the function tide_height declared, in mode ANY
    Then the request the batch carried has the tool "tide_height" and the tool choice "tool tide_height"

  Scenario: Structured output: a JSON schema asked for is sent on as the API takes it, and the answer parsed
    When the Gemini SDK asks lowtide serve "JSON tide at Brest" for JSON of the schema of a Tide
    Then the Gemini SDK's parsed answer is a Tide at "Brest" of 4.2 m
    And the request the batch carried sends the generation config's "responseMimeType" as it came
    And the request the batch carried sends the generation config's "responseJsonSchema" as it came

  Scenario Outline: What lowtide serve cannot carry is refused in Google's error shape, before anything is sent
    When a Gemini client posts <what> to lowtide serve
    Then lowtide serve answers <status> in Google's error shape, status "<name>", saying "<words>"
    And the fake batch API was sent 0 request(s)

    Examples:
      | what                                      | status | name             | words                                  |
      | a body with two candidates                | 400    | INVALID_ARGUMENT | one candidate                          |
      | a body with a Google Search tool          | 400    | INVALID_ARGUMENT | function declarations alone            |
      | a body with a temperature of 3            | 400    | INVALID_ARGUMENT | it must be from 0 to 2                 |
      | a body with a field Gemini does not have  | 400    | INVALID_ARGUMENT | Unknown name "colour"                  |
      | a body with a cached content              | 400    | INVALID_ARGUMENT | keeps no cached contents               |
      | a body with no contents                   | 400    | INVALID_ARGUMENT | contents is not specified              |
      | a body with a file given by URI           | 400    | INVALID_ARGUMENT | cannot send a part holding fileData    |
      | a body answering a function never called  | 400    | INVALID_ARGUMENT | answers no function call               |
      | a body asking for another model           | 404    | NOT_FOUND        | models/gemini-1.5-pro is not found     |
      | a body asking to count its tokens         | 404    | NOT_FOUND        | not served here                        |
      | a body under API version v2               | 404    | NOT_FOUND        | not served here                        |
      | a body not a JSON object                  | 400    | INVALID_ARGUMENT | must be a JSON object                  |
      | a body with a role Gemini does not have   | 400    | INVALID_ARGUMENT | Please use a valid role                |
      | a body with an audio part                 | 400    | INVALID_ARGUMENT | carries images and PDFs, not audio/wav |
      | a body with the VALIDATED calling mode    | 400    | INVALID_ARGUMENT | AUTO, ANY or NONE, not VALIDATED       |
      | a body allowing two of three functions    | 400    | INVALID_ARGUMENT | one name, or all the declared          |
      | a body with a topK of 2.5                 | 400    | INVALID_ARGUMENT | expected an integer                    |
      | a body asking for images back             | 400    | INVALID_ARGUMENT | TEXT alone                             |
      | a body with a generation setting unknown  | 400    | INVALID_ARGUMENT | Unknown name "colour"                  |
      | a body with a non-text system instruction | 400    | INVALID_ARGUMENT | takes text alone here                  |
      | a body of thoughts alone                  | 400    | INVALID_ARGUMENT | no content has a part                  |
      | a body with parts not a list              | 400    | INVALID_ARGUMENT | expected a list                        |

  Scenario: The Gemini SDK sees a refusal as its own error, with Google's status
    When the Gemini SDK asks lowtide serve "Hello" with a temperature of 3
    Then the Gemini SDK raised its ClientError with code 400 and status "INVALID_ARGUMENT"

  Scenario: A request the batch answered with an error comes back as the API's error
    Given the fake batch API fails the next request with "INVALID_ARGUMENT"
    When the Gemini SDK asks lowtide serve "Hello, refused" and fails
    Then the Gemini SDK raised its ClientError with code 400 and status "INVALID_ARGUMENT"

  Scenario Outline: serve's guards stand before Gemini's route: key, body limit, method, unknown routes
    When a Gemini client sends <what> to lowtide serve
    Then lowtide serve answers <status> in Google's error shape, status "<name>", saying "<words>"
    And the fake batch API was sent 0 request(s)

    Examples:
      | what                                           | status | name             | words                  |
      | a Gemini request with the wrong x-goog-api-key | 401    | UNAUTHENTICATED  | invalid x-goog-api-key or ?key= |
      | a Gemini request with no key                   | 401    | UNAUTHENTICATED  | invalid x-goog-api-key or ?key= |
      | a Gemini request with the wrong ?key=          | 401    | UNAUTHENTICATED  | invalid x-goog-api-key or ?key= |
      | a Gemini body over 20 MB                       | 413    | INVALID_ARGUMENT | at most 20971520 bytes |
      | a GET of Gemini's route                        | 405    | INVALID_ARGUMENT | is not allowed         |
      | a POST to /v1beta/models                       | 404    | NOT_FOUND        | is not served here     |
      | a POST to /v1/messages                         | 404    | NOT_FOUND        | is not served here     |

  Scenario: A key given as ?key=, as Google's API takes it, is the client's key
    When a Gemini client sends a Gemini request with its key as ?key= to lowtide serve
    Then lowtide serve answers 200 with a candidate whose text is "tide: Hello"
    And the fake batch API was sent 1 request(s)

  Scenario: The Gemini SDK with a wrong key gets its own error, and the call is not sent
    When the Gemini SDK asks lowtide serve "Hello" with the key "not-the-key" and fails
    Then the Gemini SDK raised its ClientError with code 401 and status "UNAUTHENTICATED"
    And the fake batch API was sent 0 request(s)

  Scenario: A request sent again by the Gemini SDK with the same Idempotency-Key is answered from the ledger
    When the Gemini SDK asks lowtide serve "First" with the Idempotency-Key "tide-1"
    And the Gemini SDK asks lowtide serve "First" with the Idempotency-Key "tide-1"
    Then both Gemini answers are "tide: First"
    And the fake batch API was sent 1 request(s)
