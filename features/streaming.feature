Feature: An actor's answer streamed as it is written
  As a developer showing a model's answer while it is written
  I want `actor.stream(...)` to give me the text and tool calls as they arrive, then the same response `run` gives
  So that streaming costs me nothing in what I know about the call: usage, cost, the ledger, errors

  Background:
    Given an emulated Anthropic API

  Scenario Outline: A live stream comes in pieces through <api>, then the response run would give, at run's cost
    Given a streaming actor on <api> in live mode
    When the actor's answer to "Describe the harbour at low tide, in some detail." is streamed
    Then more than one piece of text came before the response, and the response came last
    And the pieces of text joined are the response's text
    And the same call made with run answers the same text with the same usage and cost
    And the API streamed its answer <streams> times

    Examples:
      | api                       | streams |
      | anthropic                 | 1       |
      | openai responses          | 1       |
      | openai chat_completions   | 1       |
      | groq                      | 1       |
      | gemini                    | 1       |
      | mistral                   | 1       |
      | azure_openai              | 1       |
      | bedrock                   | 1       |

  Scenario Outline: A tool call streams its id and name first, then its arguments, through <api>
    Given a streaming actor on <api> in live mode
    When the actor's answer to "Record today's high tide" is streamed with the tool "record_tide" forced
    Then the first tool-call piece names "record_tide" with the call's id
    And the tool-call pieces' arguments joined are the JSON of the response's tool call input

    Examples:
      | api                     |
      | anthropic               |
      | openai responses        |
      | openai chat_completions |
      | gemini                  |
      | mistral                 |
      | bedrock                 |

  Scenario Outline: Thinking streams in pieces before the answer through <api>, as the response's thinking
    Given a streaming actor on <api> in live mode, asked to think
    When the actor's answer to "Describe the harbour at low tide, in some detail." is streamed
    Then more than one piece of thinking came, all before the first piece of text
    And the pieces of thinking joined are the response's thinking, with its signature

    Examples:
      | api              |
      | anthropic        |
      | gemini           |
      | openai responses |

  Scenario: Thinking an actor was not asked for streams no thinking piece
    Given a streaming actor on anthropic in live mode
    When the actor's answer to "Describe the harbour at low tide, in some detail." is streamed
    Then no piece of thinking came, and the response holds no thinking

  Scenario: In batch mode the stream is the finished answer, kept in the ledger and never paid twice
    Given a streaming actor on anthropic in batch mode
    When the actor's answer to "Is the harbour open?" is streamed with the key "harbour-1"
    Then the stream was the response alone
    When the actor's answer to "Is the harbour open?" is streamed with the key "harbour-1"
    Then the stream was the response alone
    And the API received these calls:
      | call           | count |
      | batches.create | 1     |

  Scenario: A stream cut half-way is an error, never a short answer
    Given a streaming actor on anthropic in live mode
    And the API's streams are cut after their second piece of text
    When the actor's answer to "Describe the harbour at low tide, in some detail." is streamed
    Then the stream gave 2 pieces of text and then failed with StreamInterruptedError
    And the API streamed its answer 1 times

  Scenario: A Bedrock ConverseStream whose connection breaks half-way is an error, never a short answer
    Given a streaming actor on bedrock in live mode
    And the API's streams are cut after their second piece of text
    When the actor's answer to "Describe the harbour at low tide, in some detail." is streamed
    Then the stream gave 2 pieces of text and then failed with StreamInterruptedError
    And the API streamed its answer 1 times

  Scenario: A Responses stream that ends before response.completed is an error, never a short answer
    Given a streaming actor on openai responses in live mode
    And the API's streams are cut after their second piece of text
    When the actor's answer to "Describe the harbour at low tide, in some detail." is streamed
    Then the stream gave 2 pieces of text and then failed with StreamInterruptedError

  Scenario: Stop sequences on the Responses API, which has none, are applied by lowtide, streamed and not
    Given a streaming actor on openai responses in live mode
    When the actor's answer to "Describe the harbour at low tide, in some detail." is streamed with the stop sequence "low tide"
    Then the pieces of text joined are the response's text
    And the response ends before "low tide", stopped by it, with the usage of the whole answer

  Scenario: An answer that only begins a stop sequence at its end is given whole, its held-back text included
    Given a streaming actor on openai responses in live mode
    When the actor's answer to "Is the harbour open?" is streamed with the stop sequence "b6b9 and more"
    Then the pieces of text joined are the response's text
    And the streamed text ends with "b6b9", held back while it might begin the stop sequence
    And the response ended on its own, never stopped by a stop sequence

  Scenario: A tool call streams whole past a stop sequence its arguments hold
    Given a streaming actor on openai responses in live mode
    When the actor's answer to "Record today's high tide" is streamed with the tool "record_tide" forced and the stop sequence "port"
    Then the first tool-call piece names "record_tide" with the call's id
    And the tool-call pieces' arguments joined are the JSON of the response's tool call input
    And the response ended on its own, never stopped by a stop sequence

  Scenario: Stop sequences on the Responses API are refused in batch mode, before anything is sent
    Given a streaming actor on openai responses in batch mode
    When the actor's answer to "Is the harbour open?" is streamed with the stop sequence "harbour"
    Then the stream gave 0 pieces of text and then failed with ConfigurationError
    And the stream's error names the field "stop_sequences" and says "live answers only"
    And the API received no calls at all

  Scenario: A provider without a streaming API gives its answer as the one event, through the same live path
    Given a streaming actor on a provider plugged in without a stream method
    When the actor's answer to "Is the harbour open?" is streamed
    Then the stream was the response alone
    And the actor's middleware saw the streamed call

  Scenario: Middleware sees a streamed live call, its request and its whole answer
    Given a streaming actor on anthropic in live mode, with a middleware that notes each call
    When the actor's answer to "Describe the harbour at low tide, in some detail." is streamed
    Then more than one piece of text came before the response, and the response came last
    And the actor's middleware saw the streamed call

  Scenario Outline: A reader that breaks out after the first piece closes the API's stream on <api>, and the ledger records nothing
    Given a streaming live actor on <api> over a socket, to an emulator holding its streams after their first piece
    When the actor's answer is read until its first piece, then the reader breaks out of its loop
    Then the emulator saw the stream closed while the rest was held, and nothing was left unretrieved
    And the actor's next streamed answer comes whole after it
    And the ledger holds no requests and no batches

    Examples:
      | api                     |
      | anthropic               |
      | openai responses        |
      | openai chat_completions |
      | groq                    |
      | together                |
      | fireworks               |
      | xai                     |
      | openai_compatible       |
      | gemini                  |
      | mistral                 |
      | azure_openai            |
