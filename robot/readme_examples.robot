*** Settings ***
Documentation       README.md's examples run as written: every python and bash block, in order, in one directory,
...                 against a `lowtide emulator` process (its address, keys, a ledger and a short poll interval given
...                 by the environment, never by editing a block). The pydantic-ai and LangChain examples run in those
...                 frameworks' nox sessions (`features/integrations/readme_examples.feature`).

Library             ReadmeLibrary.py

Suite Teardown      Clean Up README Examples


*** Test Cases ***
Every Example In The README Runs As Written
    Run The README's Examples
    The Examples Not Run Should Be
    ...    the test suite itself
    ...    needs pydantic-ai
    ...    needs langchain
