Feature: An actor answered live by Bedrock's Converse
  As a developer whose agents run on Bedrock models
  I want `provider: bedrock` in live mode to call bedrock-runtime's Converse through boto3
  So that one call gets one answer at once, with its usage, price and stop reason in lowtide's words

  Background:
    Given an emulated AWS account on a socket, whose batch inference jobs take 0 seconds
    And a Bedrock actor "tides" with:
      """
      max_tokens: 256
      """

  Scenario: A live call is answered through Converse, priced at AWS's on-demand price
    When the actor is asked "When is high tide?"
    Then the answer is the emulated reply to "When is high tide?"
    And the answer came through live mode
    And the response has these fields:
      | field         | value                  |
      | stop_reason   | end_turn               |
      | model         | amazon.nova-micro-v1:0 |
      | cost.pricing  | live                   |
    And the response reports some input and output tokens, and no cache use
    And the API received these calls:
      | call                    | count |
      | bedrock.converse        | 1     |
      | bedrock.converse_stream | 0     |

  Scenario: A call that may write a long answer is streamed through ConverseStream, into the same answer
    When the actor is asked "When is high tide?" with:
      """
      max_tokens: 8000
      """
    Then the answer is the emulated reply to "When is high tide?"
    And the response reports some input and output tokens, and no cache use
    And the API received these calls:
      | call                    | count |
      | bedrock.converse        | 0     |
      | bedrock.converse_stream | 1     |

  Scenario: A tool the model calls comes back as a tool use, its stop reason tool_use
    When the actor is asked "[[emulator:tool:log_tide]] Log today's high tide." with:
      """
      tools:
        - name: log_tide
          description: Log a tide.
          input_schema: {type: object, properties: {place: {type: string}, height: {type: number}}, required: [place, height]}
      """
    Then the actor called the tool "log_tide" with a string "place" and a number "height"
    And the response has these fields:
      | field       | value    |
      | stop_reason | tool_use |

  Scenario Outline: Converse's <error> is <kind>, <what>
    Given the account will fail the next "bedrock.converse" call with status <status>
    When the actor is asked "When is high tide?"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received these calls:
      | call             | count |
      | bedrock.converse | 2     |

    Examples:
      | error                       | status | kind                | what              |
      | ThrottlingException         | 429    | a RateLimitError    | waited out        |
      | InternalServerException     | 500    | a ServerError       | tried again       |
      | ServiceUnavailableException | 503    | a ServerError       | tried again       |

  Scenario Outline: A model the account does not have is refused in <mode> mode before anything is sent, naming the closest it lists
    Given a Bedrock actor "typo" with:
      """
      model: amazon.nova-mikro-v1:0
      batch_processing: <mode>
      """
    When the actor is asked "When is high tide?"
    Then a ConfigurationError is raised
    And the error message contains "has no model 'amazon.nova-mikro-v1:0'. Did you mean 'amazon.nova-micro-v1:0'"
    And the API received these calls:
      | call                    | count |
      | bedrock.models.get      | 1     |
      | bedrock.models.list     | 1     |
      | bedrock.converse        | 0     |
      | bedrock.s3.put_object   | 0     |
      | bedrock.batches.create  | 0     |

    Examples:
      | mode  |
      | live  |
      | batch |

  Scenario: A model is looked up once, however many calls name it
    When the actor is asked "When is high tide?"
    And the actor is asked "When is low tide?"
    Then the API received these calls:
      | call               | count |
      | bedrock.models.get | 1     |
      | bedrock.converse   | 2     |

  Scenario: A cross-region inference profile is looked up as a profile, and one the account lacks is refused by name
    Given a Bedrock actor "profiled" with:
      """
      model: us.anthropic.claude-haiku-4-5-20251001-v1:0
      """
    When the actor is asked "When is high tide?"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received these calls:
      | call                 | count |
      | bedrock.profiles.get | 1     |
      | bedrock.models.get   | 0     |
    Given a Bedrock actor "mistyped" with:
      """
      model: us.anthropic.claude-haiku-4-5-20251001-v2:0
      """
    When the actor is asked "When is high tide?"
    Then a ConfigurationError is raised
    And the error message contains "Bedrock's inference profiles at"
    And the error message contains "Did you mean 'us.anthropic.claude-haiku-4-5-20251001-v1:0'"

  Scenario: A model named by its ARN (provisioned, custom or imported) is left to Converse, which refuses one it lacks
    Given a Bedrock actor "provisioned" with:
      """
      model: arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc123
      """
    When the actor is asked "When is high tide?"
    Then an InvalidRequestError is raised
    And the error message contains "The provided model identifier is invalid."
    And the API received these calls:
      | call               | count |
      | bedrock.models.get | 0     |
      | bedrock.converse   | 1     |

  Scenario: Credentials that may not read the account's catalogue (403) leave the model unchecked, and the call goes on
    Given the account will fail the next "bedrock.models.get" call with status 403
    When the actor is asked "When is high tide?"
    Then the answer is the emulated reply to "When is high tide?"
    And the API received these calls:
      | call               | count |
      | bedrock.models.get | 1     |
      | bedrock.converse   | 1     |

  Scenario: An image by URL is refused before anything is sent
    When the actor is asked with:
      """
      messages:
        - role: user
          content:
            - {type: image, source: {type: url, url: "https://example.com/tide.png"}}
      """
    Then a ConfigurationError is raised
    And the error message contains "Bedrock takes images and documents inline"
    And the API received no calls at all

  Scenario Outline: An image for a model whose inputModalities lack IMAGE is refused before anything is sent: <model>
    Given a Bedrock actor "eyes" with:
      """
      model: <model>
      """
    When the actor is asked with:
      """
      messages:
        - role: user
          content:
            - {type: text, text: "What is in the picture?"}
            - {type: image, source: {type: base64, media_type: image/png, data: aGVsbG8=}}
      """
    Then a ConfigurationError is raised
    And the error names the field "messages[0].content[1]"
    And the error message contains "Bedrock's model '<model>' does not read images (its inputModalities are TEXT)"
    And the API received these calls:
      | call             | count |
      | bedrock.converse | 0     |

    Examples:
      | model                                       |
      | amazon.nova-micro-v1:0                      |
      | us.anthropic.claude-3-5-haiku-20241022-v1:0 |

  Scenario: An image for a model whose inputModalities include IMAGE goes to Converse, its model data asked once
    Given a Bedrock actor "eyes" with:
      """
      model: amazon.nova-lite-v1:0
      """
    When the actor is asked with:
      """
      messages:
        - role: user
          content:
            - {type: text, text: "What is in the picture?"}
            - {type: image, source: {type: base64, media_type: image/png, data: aGVsbG8=}}
      """
    And the actor is asked with:
      """
      messages:
        - role: user
          content:
            - {type: image, source: {type: base64, media_type: image/png, data: aGVsbG8=}}
            - {type: text, text: "And in this one?"}
      """
    Then the API received these calls:
      | call               | count |
      | bedrock.models.get | 2     |
      | bedrock.converse   | 2     |

  Scenario Outline: What Converse would refuse, or has no place for, is refused before anything is sent: <what>
    When the actor is asked with:
      """
      messages: [{role: user, content: When is high tide}]
      <setting>
      """
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the error message contains "<mention>"
    And the API received no calls at all

    Examples:
      | what                         | setting                               | field            | mention                                                      |
      | a temperature above 1        | temperature: 5                        | temperature      | 5 is outside the range Bedrock's Converse takes, 0 to 1      |
      | a top_p above 1              | top_p: 1.5                            | top_p            | 1.5 is outside the range Bedrock's Converse takes, 0 to 1    |
      | Anthropic's metadata         | metadata: {user_id: u-42}             | metadata         | extra_params: {requestMetadata: {...}}                       |
      | an empty stop sequence       | stop_sequences: ['']                  | stop_sequences.0 | the stop sequence is empty; Converse refuses it              |
      | a stop sequence twice        | stop_sequences: [END, END]            | stop_sequences.1 | 'END' is given twice                                         |
      | Anthropic's output_config    | output_config: {effort: low}          | output_config    | give `response_model` for structured output                  |
      | Anthropic's cache_control    | cache_control: {type: ephemeral}      | cache_control    | cache points inside the messages                             |

  Scenario: An actor configured with a temperature Converse refuses is refused as it loads
    When a Bedrock actor "hot" is set up with:
      """
      temperature: 1.2
      """
    Then a ConfigurationError is raised
    And the error names the field "temperature"
    And the error message contains "1.2 is outside the range Bedrock's Converse takes, 0 to 1"

  Scenario: Without a region the actor says which setting to give, before anything is sent
    Given the AWS region is not set anywhere
    When a live Bedrock actor is used
    Then a ConfigurationError naming "provider_options.bedrock.region" is raised, saying "No AWS region for Bedrock"

  Scenario Outline: AWS's <name> (HTTP <status>) is lowtide's <class>
    When boto3 raises AWS's <name> with HTTP status <status>
    Then lowtide reads it as a <class>

    Examples:
      | name                          | status | class                 |
      | ThrottlingException           | 429    | RateLimitError        |
      | ServiceQuotaExceededException | 400    | RateLimitError        |
      | ModelNotReadyException        | 429    | ServerError           |
      | ModelTimeoutException         | 408    | ServerError           |
      | ModelErrorException           | 424    | ServerError           |
      | ServiceUnavailableException   | 503    | ServerError           |
      | InternalServerException       | 500    | ServerError           |
      | ValidationException           | 400    | InvalidRequestError   |
      | AccessDeniedException         | 403    | PermissionDeniedError |
      | UnrecognizedClientException   | 403    | AuthenticationError   |
      | ResourceNotFoundException     | 404    | NotFoundError         |
      | NoSuchKey                     | 404    | NotFoundError         |

  Scenario Outline: A connection to AWS that <what> is lowtide's <class>
    When boto3 raises its <exception>
    Then lowtide reads it as a <class>

    Examples:
      | what                        | exception               | class               |
      | could not be made           | EndpointConnectionError | APIUnreachableError |
      | got no answer in time       | ReadTimeoutError        | APITimeoutError     |
      | was not made in time        | ConnectTimeoutError     | APITimeoutError     |
      | had no credentials to sign  | NoCredentialsError      | APIError            |
      | closed before its answer    | ConnectionClosedError   | APIConnectionError  |
      | broke while reading a body  | ResponseStreamingError  | APIConnectionError  |

  Scenario: An endpoint where nothing listens is unreachable, said at once and not tried again
    Given a Bedrock actor "nowhere" with:
      """
      base_url: http://127.0.0.1:9
      """
    When the actor is asked "When is high tide?"
    Then an APIUnreachableError is raised
    And the error message contains "could not connect to 127.0.0.1:9 (connection refused)"

  Scenario: Without AWS credentials the actor says where they are looked for, before anything is sent
    Given no AWS credentials are found anywhere
    When a live Bedrock actor is used
    Then a ConfigurationError naming "client" is raised, saying "No AWS credentials for Bedrock"

  Scenario: A client that is not a boto3 session is refused, naming what it must be
    When a live Bedrock actor is built with a client that is not a boto3 session
    Then a ConfigurationError naming "client" is raised, saying "client must be a boto3.session.Session for provider bedrock, not str"

  Scenario: An actor given its own boto3 session calls through it
    Given a Bedrock actor "own" given its own boto3 session
    When the actor is asked "When is high tide?"
    Then the answer is the emulated reply to "When is high tide?"

  Scenario: An actor whose base_url is AWS's own Bedrock endpoint calls each service's own endpoint in that region
    When a live Bedrock actor is built for "https://bedrock.eu-west-3.amazonaws.com"
    Then its calls go to "https://bedrock-runtime.eu-west-3.amazonaws.com" in the region eu-west-3

  Scenario: lowtide.providers.bedrock exports its providers by name, and nothing it does not have
    Then every name in lowtide.providers.bedrock's __all__ is exported
    And asking lowtide.providers.bedrock for "BedrockClient" raises an AttributeError naming it
