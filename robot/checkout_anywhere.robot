*** Settings ***
Documentation       No test depends on where the checkout lives: the tests that run lowtide as a user whom file modes
...                 stop (root without its capabilities, when the suite runs as root) pass from a copy of the checkout,
...                 with a virtual environment of its own, in a folder only its owner may enter (mode 700, as
...                 `mktemp -d` makes it, or as root's home is), where `nobody` could not even start its `lowtide`.
Library             CheckoutLibrary.py
Suite Teardown      Remove The Copies


*** Test Cases ***
The Tests That Run Lowtide As A User Whom File Modes Stop Pass From A Checkout Only Its Owner May Enter
    ${copy}=    Copy The Checkout Into A Folder Only Its Owner May Enter
    Run Robot Tests In The Copy    ${copy}    ${{["robot/cli.robot", "robot/dashboard.robot"]}}
    ...    Lowtide Status Reads A Ledger In A Folder It Cannot Write, And Writes Nothing There
    ...    A Read-Only Ledger File Is Shown, And Nothing Is Written To It Or Beside It
