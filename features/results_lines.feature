Feature: A provider's results files read line by line, as their bytes come
  As the author of a batch provider reading its API's JSONL results with `lowtide.providers`' line readers
  I want lines cut across downloaded chunks joined, blank lines skipped, a last line cut short fetched again and a
  line no one can read kept with its reason
  So that every answer of a batch is read once, whatever the chunks of its download, and none is lost unseen

  Scenario: Lines cut across chunks are joined, blank ones skipped, and a last line without its newline still read
    Given a download of a results file in the chunks:
      """
      {"custom_id": "a", "n": 1}\n{"custom_id": "b",
       "n": 2}\n\n   \n{"custom_id": "c", "n": 3}
      """
    When its lines are split
    Then the lines are "a" whole, "b" whole and "c" without its newline
    When its lines are fed to a handler
    Then the handler got "a", "b" and "c", and 3 lines were counted

  Scenario: A last line cut short mid-character is a download to fetch again, not an unreadable answer
    Given a download of a results file in the chunks:
      """
      {"custom_id": "a", "n": 1}\n{"custom_id": "b", "text": "caf\xc3
      """
    When its lines are fed to a handler
    Then the read fails with APIConnectionError saying "A line of the results of batch b-1 was cut short."
    And the handler got only "a"

  Scenario Outline: A whole line that cannot be read is kept as unreadable, saying why: <what>
    When the whole line <line> is read
    Then it is unreadable, saying "<reason>"

    Examples:
      | what                    | line                               | reason                     |
      | a byte that is no UTF-8 | {"custom_id": "a", "t": "caf\xc3"} | not UTF-8: byte 0xc3 at 28 |
      | JSON nested too deeply  | 100000 brackets deep               | JSON nested too deeply     |

  Scenario: A line of a shape the codec does not know is that request's unreadable result, the line kept as it came
    When the Groq codec's outcome of the line {"custom_id": "r-1", "response": {"status_code": 200, "body": {"usage": {"prompt_tokens": "many"}}}} is read
    Then it is BatchRequestUnreadable for "r-1" in "b-1", saying "ValueError: invalid literal for int() with base 10: 'many'"
    And its raw line is {"custom_id":"r-1","response":{"status_code":200,"body":{"usage":{"prompt_tokens":"many"}}}}
