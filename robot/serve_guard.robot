*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       A real `lowtide serve` process facing clients it cannot trust, and `--access-log`: a body streamed
...                 past the API's own limit is refused with 413 without being held (the server's peak memory stays
...                 well under the body's size), a Content-Length over the limit is refused before any body is sent,
...                 another method gets 405 with Allow, and `lowtide serve --access-log` and `lowtide emulator
...                 --access-log` write one line per request (method, path, status, duration), never a key or a body.

Library             ServeGuardLibrary.py

Suite Setup         Start Emulator And Servers With Access Logs
Suite Teardown      Stop Emulator And Servers


*** Test Cases ***
A Body Streamed Past The Messages API's 32 MB Is Refused Without Being Held
    ${answered}=    Send    anthropic
    Should Be Equal As Integers    ${answered}[status]    200
    ${before}=    Peak Memory Of Serve    anthropic
    ${answer}=    Stream A Body Of    anthropic    megabytes=400
    Should Be Equal As Integers    ${answer}[status]    413
    Should Be Equal    ${answer}[body][type]    error
    Should Be Equal    ${answer}[body][error][type]    request_too_large
    Should Contain    ${answer}[body][error][message]    at most 33554432 bytes
    Should Be True    ${answer}[sent_bytes] > 33554432
    ${after}=    Peak Memory Of Serve    anthropic
    # Held whole, 400 MiB would show; the limit (32 MiB) is the most the server may hold of it.
    Should Be True    ${after} - ${before} < 3 * 33554432    peak memory grew by ${after} - ${before} bytes

A Content-Length Over The Limit Is Refused Before The Body Is Sent
    ${answer}=    Send Only Headers Declaring A Body Of    anthropic    50000000
    Should Be Equal As Integers    ${answer}[status]    413
    Should Be Equal    ${answer}[body][error][type]    request_too_large
    ${answer}=    Send Only Headers Declaring A Body Of    openai    60000000
    Should Be Equal As Integers    ${answer}[status]    413
    Should Be Equal    ${answer}[body][error][type]    invalid_request_error
    Should Be Equal    ${answer}[body][error][code]    request_too_large
    Should Contain    ${answer}[body][error][message]    at most 52428800 bytes

Another Method On A Served Path Gets 405 With Allow
    ${answer}=    Send    anthropic    method=GET
    Should Be Equal As Integers    ${answer}[status]    405
    Should Be Equal    ${answer}[headers][allow]    POST
    Should Be Equal    ${answer}[body][error][type]    invalid_request_error
    ${answer}=    Send    openai    method=DELETE
    Should Be Equal As Integers    ${answer}[status]    405
    Should Be Equal    ${answer}[headers][allow]    POST
    Should Be Equal    ${answer}[body][error][type]    invalid_request_error

The Access Logs Of Serve And Emulator Have One Line Per Request, Never A Key Or A Body
    ${answer}=    Send    openai    prompt=A secret prompt never logged
    Should Be Equal As Integers    ${answer}[status]    200
    ${answer}=    Send    openai    method=PUT
    Should Be Equal As Integers    ${answer}[status]    405
    Access Log Should Show    openai    POST    /v1/chat/completions    200
    Access Log Should Show    openai    PUT    /v1/chat/completions    405
    Access Log Should Show    anthropic    POST    /v1/messages    413
    Access Log Should Show    anthropic    GET    /v1/messages    405
    Access Log Should Show    emulator    POST    /v1/files    200
    Access Log Should Show    emulator    POST    /v1/batches    200
    Access Log Should Show    emulator    POST    /v1/messages/batches    200
    FOR    ${name}    IN    emulator    openai    anthropic
        ${stderr}=    Stderr Of    ${name}
        Should Not Contain    ${stderr}    secret prompt
        Should Not Contain    ${stderr}    robot-guard-secret
        Should Not Contain    ${stderr}    sk-upstream-guard-never-shown
    END
