Feature: An actor answered by a Gemini model on Vertex AI, live
  As a developer whose company reaches Gemini through Google Cloud
  I want `provider: vertex` with a project and a location to answer calls through Vertex AI's generateContent
  So that my agent gets the same ActorResponse as through the Gemini API, billed to my Google Cloud project

  Every call below goes through the unmodified google-genai SDK (`vertexai=True`), built by lowtide from the actor's
  settings, to the emulator's Vertex AI, in process.

  Background:
    Given an emulated Vertex AI

  Scenario: A live call is answered under the actor's project and location, priced at Gemini's live prices
    Given a Vertex actor "pilot" with:
      """
      system_prompt: You answer in one line.
      max_tokens: 600
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the response has these fields:
      | field        | value            |
      | model        | gemini-2.5-flash |
      | provider     | vertex           |
      | mode         | live             |
      | stop_reason  | end_turn         |
      | cost.pricing | live             |
    And Vertex AI was called at "/v1beta1/projects/tide-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent" with the token "lowtide-anonymous"
    And the API received these calls:
      | call                    | count |
      | vertex.models.get       | 1     |
      | vertex.generate_content | 1     |

  Scenario: A long answer is streamed, and makes the same answer
    Given a Vertex actor "talkative" with:
      """
      max_tokens: 9000
      """
    When the actor is asked "Tell me of the tides"
    Then the answer is the emulated reply to "Tell me of the tides"
    And the API received these calls:
      | call                           | count |
      | vertex.stream_generate_content | 1     |

  Scenario: A 429 with no retries left is a RateLimitError keeping the wait; a 500 is a ServerError
    Given a Vertex actor "hasty" with:
      """
      live: {retries: {rate_limited: 0, server: 0}}
      """
    And the Vertex emulator answers the next generateContent call with status 429, asking to wait 7 seconds
    When the actor is asked "Is the harbour open?"
    Then a RateLimitError is raised
    And the rate limit error asks to wait 7 seconds and says it is retryable
    Given the Vertex emulator answers the next generateContent call with status 500
    When the actor is asked "Is the harbour open?"
    Then a ServerError is raised

  Scenario: A model Vertex AI does not serve is refused before anything is generated, with the names it serves
    Given a Vertex actor "lost" with:
      """
      model: gemini-2.5-flsh
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error message contains "gemini-2.5-flash"
    And the API received these calls:
      | call                    | count |
      | vertex.generate_content | 0     |

  Scenario: Without a project, the actor says what to set before anything is sent
    Given no Google Cloud project is set in the environment
    And a Vertex actor "homeless" with:
      """
      vertex: {project: null}
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error names the field "provider_options.vertex.project"
    And the error message contains "GOOGLE_CLOUD_PROJECT"
    And nothing was sent to Vertex AI

  Scenario: Without Google Cloud credentials, the actor says how to get them before anything is sent
    Given the Google Cloud credentials file the environment names does not exist
    And a Vertex actor "stranger" with:
      """
      vertex: {credentials: default}
      """
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error names the field "provider_options.vertex.credentials"
    And the error message contains "gcloud auth application-default login"
    And nothing was sent to Vertex AI

  Scenario Outline: A wrong Vertex setting is refused as the actor loads, naming it: <case>
    When an actor of Vertex AI "wrong" is configured with:
      """
      vertex: {<setting>}
      """
    Then a ConfigurationError is raised
    And the error names the field "provider_options.vertex.<field>"

    Examples:
      | case                 | setting                 | field       |
      | a project id too odd | project: "Tide Project" | project     |
      | an unknown setting   | region: us-central1     | region      |
      | credentials unknown  | credentials: mine       | credentials |
