#!/usr/bin/env bash
# curl as a client of lowtide serve: a chat completion, a streamed response and a message, each a plain HTTP request
# with the client key as a bearer token; prints one JSON object of what came back.
set -euo pipefail
openai="$LOWTIDE_SERVE_OPENAI_URL/v1"
auth="Authorization: Bearer $LOWTIDE_SERVE_KEY"

chat=$(curl -sS --fail-with-body "$openai/chat/completions" -H "$auth" -H "Content-Type: application/json" \
  -d "{\"model\": \"$OPENAI_MODEL\", \"messages\": [{\"role\": \"user\", \"content\": \"What is a tide, curl?\"}]}")
streamed=$(curl -sS --fail-with-body -N "$openai/responses" -H "$auth" -H "Content-Type: application/json" \
  -d "{\"model\": \"$OPENAI_MODEL\", \"input\": \"Tell me about tides, curl\", \"stream\": true}")
message=$(curl -sS --fail-with-body "$LOWTIDE_SERVE_ANTHROPIC_URL/v1/messages" -H "x-api-key: $LOWTIDE_SERVE_KEY" \
  -H "anthropic-version: 2023-06-01" -H "Content-Type: application/json" \
  -d "{\"model\": \"$ANTHROPIC_MODEL\", \"max_tokens\": 64, \"messages\": [{\"role\": \"user\", \"content\": \"Hi, curl\"}]}")
refused=$(curl -sS -o /dev/null -w '%{http_code}' "$openai/chat/completions" -H "Authorization: Bearer wrong" \
  -H "Content-Type: application/json" -d "{\"model\": \"$OPENAI_MODEL\", \"messages\": []}")
events=$(printf '%s\n' "$streamed" | grep -c '^event: ' || true)
last_event=$(printf '%s\n' "$streamed" | grep '^event: ' | tail -n 1 | cut -d' ' -f2)
printf '{"chat": %s, "message": %s, "stream_events": %s, "stream_last_event": "%s", "wrong_key_status": %s}\n' \
  "$chat" "$message" "$events" "$last_event" "$refused"
