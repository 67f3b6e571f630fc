Feature: The emulator serves Google's Gemini API too: models, generateContent, streaming and countTokens
  As a developer of lowtide (or of any program using the official google-genai SDK)
  I want the emulator to answer the Gemini API from the same app and port as the other two
  So that Gemini calls can be tested offline, on a clock the tests control, with Gemini's errors and faults

  Every answer below is read by the unmodified google-genai SDK, pointed at the emulator by its own base-URL setting.

  Rule: Both API versions the SDK may use are served, with deterministic answers and usage

    Scenario Outline: generateContent answers with text, a finish reason and usage under <version>
      Given the Gemini emulator runs on a manual clock, called through API version "<version>"
      When I ask the Gemini emulator's "gemini-2.5-flash" "Where is the tide table for Brest?"
      Then the Gemini emulator answer's text quotes "Where is the tide table for Brest?"
      And the Gemini emulator answer finished with "STOP"
      And the Gemini emulator answer's usage adds up, with thinking tokens counted apart
      When I ask the Gemini emulator's "gemini-2.5-flash" "Where is the tide table for Brest?" again
      Then the Gemini emulator answer is the same text as before

      Examples:
        | version |
        | v1      |
        | v1beta  |

    Scenario: A model without thinking reports no thinking tokens, and countTokens counts what the usage counts
      Given the Gemini emulator runs on a manual clock, called through API version "v1beta"
      When I ask the Gemini emulator's "gemini-2.0-flash" "Count these words, please, all seven"
      Then the Gemini emulator answer reports no thinking tokens
      And the Gemini emulator counts the same prompt tokens for "Count these words, please, all seven"

    Scenario: Models are listed and described under /v1 beside the other APIs' models, told apart by the caller
      Given the Gemini emulator runs on a manual clock, called through API version "v1"
      Then the Gemini emulator lists "models/gemini-2.5-flash" with a window of 1048576 tokens
      And the Gemini emulator describes "gemini-2.0-flash" with at most 8192 output tokens
      And an OpenAI caller of the same emulator still lists OpenAI's models at "/v1/models"

    Scenario: A streamed answer comes in pieces that make the whole answer, the last with the finish reason
      Given the Gemini emulator runs on a manual clock, called through API version "v1beta"
      When I stream the Gemini emulator's "gemini-2.0-flash" "Tell me everything about the tides at Saint-Malo, please, in detail"
      Then the Gemini emulator stream came in more than one piece
      And the Gemini emulator stream's pieces make the text a plain call gives
      And only the last piece of the Gemini emulator stream says "STOP" and the answer's usage

  Rule: Tools, structured output and generation settings are read as Gemini reads them

    Scenario: A function the config forces is called with arguments valid against its declaration
      Given the Gemini emulator runs on a manual clock, called through API version "v1beta"
      When I ask the Gemini emulator's "gemini-2.5-flash" "What is the tide at Brest?" with the function "lookup_tide" forced
      Then the Gemini emulator answer calls "lookup_tide" with arguments valid against its declaration

    Scenario: A JSON schema response is an instance of the schema
      Given the Gemini emulator runs on a manual clock, called through API version "v1beta"
      When I ask the Gemini emulator's "gemini-2.5-flash" "Plan a voyage" for JSON of a voyage schema
      Then the Gemini emulator answer's text is JSON valid against the voyage schema

    Scenario: A stop sequence ends the answer before it
      Given the Gemini emulator runs on a manual clock, called through API version "v1beta"
      When I ask the Gemini emulator's "gemini-2.0-flash" "Hello" stopping at the word reply
      Then the Gemini emulator answer's text is "Emulated "

  Rule: Errors come in Gemini's shape and status names

    Scenario Outline: What Gemini refuses is refused with its status
      Given the Gemini emulator runs on a manual clock, called through API version "v1beta"
      When I ask the Gemini emulator's "<model>" "Hello" given <setting>
      Then the Gemini emulator call fails with <code> "<status>" mentioning "<mention>"

      Examples:
        | model            | setting                 | code | status           | mention                          |
        | gemini-9-ultra   | nothing more            | 404  | NOT_FOUND        | models/gemini-9-ultra is not found |
        | gemini-2.5-flash | a temperature of 2.5    | 400  | INVALID_ARGUMENT | temperature must be in [0, 2]    |
        | gemini-2.5-flash | a top_p of 1.5          | 400  | INVALID_ARGUMENT | topP must be in [0, 1]           |
        | gemini-2.0-flash | 9000 output tokens      | 400  | INVALID_ARGUMENT | maxOutputTokens value 9000 is out of range |
        | gemini-2.5-flash | six stop sequences      | 400  | INVALID_ARGUMENT | at most 5 stop sequences         |

    Scenario: A stream asked for without server-sent events comes as one JSON array of its pieces
      Given the Gemini emulator runs on a manual clock, called through API version "v1beta"
      When I post the Gemini emulator's streamGenerateContent "Tell me a long story about the tide" without asking for server-sent events
      Then the Gemini emulator raw answer is one JSON array of pieces whose text quotes "Tell me a long story about the tide"

    Scenario Outline: A body the API cannot read is refused with INVALID_ARGUMENT, naming what is wrong: <what>
      Given the Gemini emulator runs on a manual clock, called through API version "v1beta"
      When I post the Gemini emulator's generateContent the body <body>
      Then the Gemini emulator raw answer is 400 "INVALID_ARGUMENT" mentioning "<mention>"

      Examples:
        | what                  | body                                                              | mention                                  |
        | not an object         | []                                                                | Expected an object                       |
        | no contents           | {}                                                                | contents is not specified                |
        | a content not a dict  | {"contents": [1]}                                                 | contents[0]: must be an object           |
        | an unknown role       | {"contents": [{"role": "robot", "parts": [{"text": "hi"}]}]}      | Please use a valid role                  |
        | no parts              | {"contents": [{"role": "user", "parts": []}]}                     | contents.parts must not be empty         |
        | a part not a dict     | {"contents": [{"parts": [7]}]}                                    | parts[0]: must be an object              |
        | text not a string     | {"contents": [{"parts": [{"text": 5}]}]}                          | Invalid value at 'contents[0].parts[0].text' |
        | inline data, no type  | {"contents": [{"parts": [{"inlineData": {"data": "AAAA"}}]}]}      | inline_data.mime_type: required field    |
        | an empty part         | {"contents": [{"parts": [{}]}]}                                   | required oneof field 'data'              |
        | a bad function name | {"contents": [{"parts": [{"text": "hi"}]}], "tools": [{"functionDeclarations": [{"name": "9bad"}]}]} | Invalid function name |
        | an unknown tool mode | {"contents": [{"parts": [{"text": "hi"}]}], "tools": [{"functionDeclarations": [{"name": "lookup"}]}], "toolConfig": {"functionCallingConfig": {"mode": "SOMETIMES"}}} | function_calling_config.mode |
        | a schema without JSON | {"contents": [{"parts": [{"text": "hi"}]}], "generationConfig": {"responseSchema": {"type": "OBJECT", "properties": {"a": {"type": "STRING", "nullable": true}}}}} | response_mime_type must be |
        | a top_k of 0 | {"contents": [{"parts": [{"text": "hi"}]}], "generationConfig": {"topK": 0}} | top_k: must be at least 1 |
        | two candidates | {"contents": [{"parts": [{"text": "hi"}]}], "generationConfig": {"candidateCount": 2}} | candidate_count |

    Scenario: A missing key is 403, a key the account does not know 400 API_KEY_INVALID, never echoed
      Given the Gemini emulator runs on a manual clock and accepts only the key "AIza-good-key-0001"
      When I call the Gemini emulator raw without a key
      Then the Gemini emulator raw answer is 403 "PERMISSION_DENIED"
      When I ask the Gemini emulator with the key "AIza-wrong-key-99"
      Then the Gemini emulator call fails with 400 "INVALID_ARGUMENT" mentioning "API key not valid"
      And the Gemini emulator error does not mention "AIza-wrong-key-99"

    Scenario: A 429 says how long to wait in its RetryInfo detail, and 500 and 503 are Gemini's
      Given the Gemini emulator runs on a manual clock, called through API version "v1beta"
      When the Gemini emulator's "gemini.generate_content" fails next with 429 asking for a wait of 7 seconds
      And I ask the Gemini emulator's "gemini-2.5-flash" "Hello" given nothing more
      Then the Gemini emulator call fails with 429 "RESOURCE_EXHAUSTED" mentioning "quota"
      And the Gemini emulator error asks for a retry delay of "7s"
      When the Gemini emulator's "gemini.generate_content" fails next with 500
      And I ask the Gemini emulator's "gemini-2.5-flash" "Hello" given nothing more
      Then the Gemini emulator call fails with 500 "INTERNAL" mentioning "internal error"
      When the Gemini emulator's "gemini.generate_content" fails next with 503
      And I ask the Gemini emulator's "gemini-2.5-flash" "Hello" given nothing more
      Then the Gemini emulator call fails with 503 "UNAVAILABLE" mentioning "overloaded"

    Scenario: Safety and recitation stops, and a blocked prompt, are asked for by markers
      Given the Gemini emulator runs on a manual clock, called through API version "v1beta"
      When I ask the Gemini emulator's "gemini-2.5-flash" "Hello [[emulator:finish:SAFETY]]"
      Then the Gemini emulator answer finished with "SAFETY" with no content and a blocked safety rating
      When I ask the Gemini emulator's "gemini-2.5-flash" "Hello [[emulator:finish:RECITATION]]"
      Then the Gemini emulator answer finished with "RECITATION" with no content
      When I ask the Gemini emulator's "gemini-2.5-flash" "Hello [[emulator:blocked:SAFETY]]"
      Then the Gemini emulator answer has no candidate and its prompt was blocked for "SAFETY"

  Rule: Over a socket, the SDK finds the emulator by GOOGLE_GEMINI_BASE_URL

    Scenario: A program using google-genai works unmodified against `lowtide emulator`'s socket
      Given the Gemini emulator serves on a socket and GOOGLE_GEMINI_BASE_URL names it
      When a google-genai client made with only an API key asks "gemini-2.5-flash" "Hello over the wire"
      Then the Gemini emulator answer's text quotes "Hello over the wire"
