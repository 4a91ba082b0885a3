"""An assistant on OpenAI Chat Completions (GPT-4.1) that makes light side calls.

A support engineer triages tally's ticket queue with the assistant (the main conversation).
Besides answering, the app makes light side calls to fill its UI: summarise an attached file,
extract the customer's name, classify a ticket. Those calls carry the whole conversation, as
many apps do, although the task needs only its own text. One side answer does refer to the
history (a ticket number discussed earlier), which is what lean_context flags as a risk.
"""

# ruff: noqa: E501  (prose: tickets, replies and prompts as written)

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from examples.recorder import Json, Recorder

__all__ = ["CALLS", "generate"]

MODEL = "gpt-4.1"
SYSTEM = """\
You are Relay, the support engineering assistant of tally, an invoicing and billing service \
for small businesses (REST API, web app, webhooks, integrations with Stripe, GoCardless and \
Xero). You help support engineers triage and answer customer tickets.

How to help:
- Be accurate about tally's behaviour. When you are not sure how the product behaves, say so \
and suggest what to check (logs, the account's settings, the API request id) instead of guessing.
- Draft replies in British English, friendly and concise, without blaming the customer. Never \
promise dates for fixes or features. Never ask for passwords or full card numbers.
- Known incidents and tickets the engineer mentions in this conversation are context: link \
related tickets by their id (TALLY-1234) when they share a cause.
- For API questions, give the endpoint, the relevant fields and a minimal curl example. Our API \
base URL is https://api.tally.example/v2 and authentication is a bearer API key.
- For billing questions: invoices are immutable once finalised; corrections are credit notes. \
Refunds go back to the original payment method within 5-10 working days.
- Escalate to engineering (say "escalate") when data looks lost or corrupted, when several \
customers report the same error, or when a webhook or payment provider is failing.
- Format: Markdown, short paragraphs, bullet lists for steps. Put a draft reply in a quote block.
"""
TICKET_A = """\
TALLY-2291 · Priority: high · From: ops@brightlane.example
Subject: Webhooks delivered 4 times
Since Monday our endpoint receives every invoice.paid webhook four times, a few seconds apart. \
Our handler is idempotent so no harm done, but our logs are full of duplicates and our \
monitoring fires. Endpoint: https://hooks.brightlane.example/tally, max attempts set to 3. \
Request ids from today: req_8f2a9c, req_8f2b01, req_8f2b77."""
TICKET_B = """\
TALLY-2304 · Priority: normal · From: Priya Raman <priya@northfield-bakery.example>
Subject: Can we add a second VAT number?
Hi, we've opened a shop in Dublin and need invoices for Irish customers to show our Irish VAT \
number (IE 3456789KH) instead of the UK one. Is there a way to have two VAT numbers on one \
account, or do we need a second account? Thanks, Priya"""
TICKET_C = """\
TALLY-2310 · Priority: high · From: finance@harbourline.example
Subject: Duplicate webhook calls and a 409
We get invoice.paid twice or more for the same invoice (evt_3Kx9, evt_3Kx9 again 4 s later) and \
our system answered the second with 409 Conflict. Does tally treat 409 as a failure and retry \
again? Endpoint https://erp.harbourline.example/hooks, configured with max attempts 3."""
EMAIL = """\
From: "Tomás Ferreira" <t.ferreira@quayside-events.example>
Subject: Re: invoice INV-2025-0412
Hello, thanks for the quick reply yesterday. Our accountant (Marta Silva) still can't open the \
PDF from the invoice email on her phone, it says the file is damaged. Could you resend it as an \
attachment, or tell me where in the app she can download it herself? Best regards, Tomás"""

CONFIG = '''\
"""Harbourline ERP: receive tally webhooks and post paid invoices to the ledger."""

import hashlib
import hmac
import os

import httpx
from fastapi import FastAPI, Header, Request, Response

from erp.store import seen_events

app = FastAPI()
SECRET = os.environ["TALLY_WEBHOOK_SECRET"].encode()
ERP_URL = os.environ.get("ERP_URL", "https://erp.internal.harbourline.example/api")
TIMEOUT = httpx.Timeout(30.0)


def valid_signature(body: bytes, signature: str) -> bool:
    expected = hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature.removeprefix("sha256="))


@app.post("/hooks")
async def tally_webhook(request: Request, tally_signature: str = Header()) -> Response:
    body = await request.body()
    if not valid_signature(body, tally_signature):
        return Response(status_code=401)
    event = await request.json()
    if await seen_events.contains(event["id"]):
        return Response(status_code=409)  # already processed
    if event["type"] == "invoice.paid":
        invoice = event["data"]["object"]
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            posted = await client.post(
                f"{ERP_URL}/ledger/receipts",
                json={
                    "reference": invoice["number"],
                    "amount": invoice["amount_paid"],
                    "currency": invoice["currency"],
                    "paid_at": invoice["status_transitions"]["paid_at"],
                },
            )
            posted.raise_for_status()
    await seen_events.add(event["id"])
    return Response(status_code=204)
'''

# (engineer's message, assistant's answer), then side calls after some turns.
TURNS: list[tuple[str, str]] = [
    (
        f"New high-priority ticket, can you help me understand it?\n\n{TICKET_A}",
        "This looks like the dispatcher retrying one time more than configured: with max attempts 3 "
        "the customer should see at most three deliveries, and they see four, a few seconds apart, "
        "which matches our backoff (1 s, 2 s, 4 s). Because their endpoint returns 2xx, a retry "
        "should not happen at all, so check two things:\n\n- The delivery log for req_8f2a9c: the "
        "status code we recorded for each attempt. If we recorded a timeout while they answered 200, "
        "our HTTP timeout may be too short for their endpoint.\n- Whether other customers report "
        "duplicates since Monday (the last deploy). If so, escalate.\n\n> Hi, thanks for the "
        "detailed report and the request ids. We're looking into why invoice.paid is delivered more "
        "than once to your endpoint and will update you here. Your idempotent handler means no "
        "data is affected in the meantime.",
    ),
    (
        "Delivery log for req_8f2a9c shows: attempt 1 200 in 0.31 s, attempt 2 200, attempt 3 200, "
        "attempt 4 200. So they answered 200 every time.",
        "Then the retries are ours, not a timeout: the dispatcher should stop after the first 2xx. "
        "Four attempts with four 200s means the success check is not ending the loop, and one more "
        "attempt than max_attempts points to an off-by-one as well. This is an engineering bug: "
        "escalate TALLY-2291 with the delivery log, and mention it started after Monday's deploy. "
        "For the customer, the reply above still works; add that we've identified a bug on our "
        "side.",
    ),
    (
        f"Another one:\n\n{TICKET_B}",
        "tally supports one VAT number per account today, but an account can have several "
        "'trading entities' (Settings → Business details → Add entity), each with its own address, "
        "VAT number and invoice numbering. Invoices are issued from the entity you pick per "
        "customer (customer → Billing → Issuing entity).\n\n> Hi Priya, congratulations on the "
        "Dublin shop! You don't need a second account: add a trading entity for the Irish "
        "business under Settings → Business details, with your IE VAT number, then choose it as "
        "the issuing entity for your Irish customers. Existing invoices stay as they are.",
    ),
    (
        "Customer sent us their config for the webhook consumer, can you check it?\n\n"
        "```python\n{CONFIG}```",
        "The consumer looks fine for idempotency (it keys on the event id), but two settings matter "
        "for the duplicates: it answers 409 on a repeated event id, and its request timeout is 30 s. "
        "A 409 is a 4xx, and tally treats any non-2xx as a failed delivery, so each duplicate we send "
        "makes us retry again. Suggest they return 200 for an event they have already processed.",
    ),
    (
        f"And this one just came in:\n\n{TICKET_C}",
        "Same cause as TALLY-2291: our dispatcher sends extra deliveries, and because Harbourline "
        "answers the duplicates with 409, each one counts as a failure and triggers more retries. "
        "Link it to TALLY-2291 and escalate, since two customers now report it.\n\n> Thanks for "
        "the details. Yes: tally treats any non-2xx response, including 409, as a failed delivery "
        "and retries it. We've found a bug on our side that sends extra deliveries and are fixing "
        "it. Meanwhile, answering 200 for an event you've already processed will stop the retries.",
    ),
    (
        f"Can you draft a reply to this email?\n\n{EMAIL}",
        "> Hello Tomás, sorry about the trouble with the PDF. I've resent invoice INV-2025-0412 as an "
        "attachment to this email. Marta can also download it any time: in the web app, open "
        "Invoices, select INV-2025-0412 and choose Download PDF. If the file still appears damaged "
        "on her phone, please let us know which app she uses to open it and we'll look into it.",
    ),
    (
        "Engineering says the fix for the duplicate webhooks ships tomorrow. How do I tell the two "
        "customers without promising a date?",
        "> An update on the duplicate webhook deliveries: our engineers have fixed the cause and the "
        "fix is being rolled out. We'll confirm here once it is live for your account. No action "
        "is needed on your side, and your idempotent handling means no data was affected.\n\n"
        "Send it on both tickets (TALLY-2291 and TALLY-2310) and keep them open until the rollout is "
        "confirmed.",
    ),
    (
        "Thanks. Last thing: what's the API call to list a customer's failed webhook deliveries?",
        "`GET /webhook-endpoints/{endpoint_id}/deliveries?status=failed` lists failed deliveries, "
        "newest first, with each attempt's status code, duration and request id (paginate with "
        "`starting_after`).\n\n```bash\ncurl https://api.tally.example/v2/webhook-endpoints/"
        'we_123/deliveries?status=failed&limit=20 \\\n  -H "Authorization: Bearer $TALLY_API_KEY"\n```\n\n'
        "Support keys can read any account's endpoints with the `Tally-Account` header.",
    ),
]
# After main turn i: (side task prompt, answer)
SIDE: dict[int, list[tuple[str, str]]] = {
    0: [
        (
            f"Classify this ticket as bug, feature or question. Answer with one word.\n\n{TICKET_A}",
            "bug",
        )
    ],
    2: [
        (
            f"Classify this ticket as bug, feature or question. Answer with one word.\n\n{TICKET_B}",
            "question",
        ),
        (
            f"Extract the person's name from this text. Answer with the name only.\n\n{TICKET_B}",
            "Priya Raman",
        ),
    ],
    3: [
        (
            "Summarise this file in one sentence for an attachment card.\n\n```python\n{CONFIG}```",
            "A FastAPI endpoint that checks tally's webhook signature, answers 409 to events it has already seen, and posts paid invoices to the ERP ledger with a 30 s timeout.",
        )
    ],
    4: [
        (
            f"Classify this ticket as bug, feature or question. Answer with one word, then the related ticket if any.\n\n{TICKET_C}",
            "bug (related: TALLY-2291)",
        )
    ],
    5: [
        (
            f"Extract the person's name from this text. Answer with the name only.\n\n{EMAIL}",
            "Tomás Ferreira",
        )
    ],
    6: [
        (
            "Summarise the open tickets of this conversation in three bullets for the shift handover.",
            "- TALLY-2291 (Brightlane) and TALLY-2310 (Harbourline): duplicate invoice.paid webhooks, our dispatcher bug; escalated, fix rolling out, customers updated.\n- TALLY-2304 (Northfield Bakery): second VAT number; answered with trading entities, waiting for the customer.\n- INV-2025-0412 (Quayside Events): PDF resent; waiting to hear if it opens.",
        )
    ],
}
CALLS = len(TURNS) + sum(len(tasks) for tasks in SIDE.values())


def generate(folder: Path) -> None:
    recorder = Recorder(
        seed=20251125,
        start=datetime(2025, 11, 25, 8, 47, 30, tzinfo=UTC),
        about="An assistant (OpenAI Chat Completions, GPT-4.1) making light side calls.",
        spacing=(6, 40),
    )
    history: list[Json] = [{"role": "system", "content": SYSTEM}]
    for index, (question, answer) in enumerate(TURNS):
        history = [*history, {"role": "user", "content": question.replace("{CONFIG}", CONFIG)}]
        recorder.chat({"model": MODEL, "temperature": 0.3, "messages": history}, answer)
        history = [*history, {"role": "assistant", "content": answer}]
        for task, reply in SIDE.get(index, []):
            side = [*history, {"role": "user", "content": task.replace("{CONFIG}", CONFIG)}]
            recorder.chat({"model": MODEL, "temperature": 0, "messages": side}, reply)
    recorder.write(folder / "assistant_with_side_calls.yaml")
