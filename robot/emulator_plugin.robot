*** Settings ***
Documentation       A third API's emulation added as a plugin package is: its module, and one entry point in the
...                 `lowtide.emulators` group of its installed distribution. `lowtide emulator`, started as a separate
...                 process, serves it over its socket beside the Anthropic and OpenAI APIs (a path they all serve
...                 going to the API whose client calls), its faults armed and its counters read through the
...                 emulator's own routes, with no line of lowtide changed. An entry point that names no emulation
...                 stops `lowtide emulator` before it listens, and `lowtide demo` before it sends anything, with one
...                 line naming it.

Library             Collections
Library             EmulatorPluginLibrary.py

Suite Teardown      Clean Up The Plugin
Test Teardown       Stop The Emulator


*** Test Cases ***
An Emulation Installed By Its Entry Point Alone Is Served Beside The Built-In APIs
    Install The Tidepool Emulation As A Plugin
    Start The Emulator With The Plugin Installed
    ${created}=    Call The Emulator As    tidepool    POST    /v1/tides    name=spring
    Should Be Equal As Integers    ${created}[status]    200
    Should Be Equal    ${created}[body][tide]    spring
    Should Be Equal As Integers    ${created}[body][count]    1
    ${models}=    Call The Emulator As    tidepool    GET    /v1/models
    Should Be Equal As Integers    ${models}[status]    200
    ${expected}=    Create List    tide-1    tide-2
    Should Be Equal    ${models}[body][tidepool_models]    ${expected}
    ${claude}=    List Models With The Official SDK    anthropic
    Should Not Be Empty    ${claude}
    Should Match    ${claude}[0]    claude-*
    ${gpt}=    List Models With The Official SDK    openai
    Should Contain Match    ${gpt}    gpt-*
    Should Not Contain Match    ${gpt}    tide-*
    Arm A Fault On The Emulator    tidepool.tides.create    529
    ${failed}=    Call The Emulator As    tidepool    POST    /v1/tides    name=neap
    Should Be Equal As Integers    ${failed}[status]    529
    Should Be Equal    ${failed}[body][tidepool_error][reason]    Overloaded
    ${keyless}=    Call The Emulator As    nobody    POST    /v1/tides    name=neap
    Should Be Equal As Integers    ${keyless}[status]    401
    Should Be Equal    ${keyless}[body][tidepool_error][reason]    x-tidepool-key is required
    ${stats}=    Read The Emulator's Stats
    Should Be Equal As Integers    ${stats}[tidepool_tides]    1
    Should Be Equal As Integers    ${stats}[calls][tidepool.tides.create]    3
    Should Be Equal As Integers    ${stats}[calls][tidepool.models.list]    1

An Installed Entry Point That Names No Emulation Stops The Emulator And The Demo At Once, Naming It
    Install The Tidepool Emulation As A Plugin    entry_point=lowtide_tidepool_emulation:NotAnEmulation
    FOR    ${command}    IN    emulator    demo
        ${line}=    Lowtide Should Refuse To Start    ${command}
        Should Be Equal    ${line}
        ...    lowtide: the emulation 'tidepool' (lowtide_tidepool_emulation:NotAnEmulation) is not an Emulation class
    END
