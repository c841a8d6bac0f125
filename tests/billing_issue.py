"""A small repository and an issue about it that quotes a traceback, a raised error and a string
literal: the within-file order's tests (tests/test_code_order.py, tests/test_bench_within_file.py)."""

ISSUE = """Saving an invoice with a negative total crashes

Steps: call save_invoice with total=-5.

Traceback (most recent call last):
  File "app/cli.py", line 3, in main
    save_invoice(-5)
  File "app/billing.py", line 9, in validate_total
    raise NegativeTotalError("the invoice total cannot be negative")
NegativeTotalError: the invoice total cannot be negative
"""
BILLING = {
    "app/billing.py": """\
        import decimal

        ROUNDING = decimal.ROUND_HALF_EVEN


        class NegativeTotalError(ValueError):
            pass


        def save_invoice(total):
            validate_total(total)
            return {"total": total}

        def validate_total(total):
            if total < 0:
                raise NegativeTotalError("the invoice total cannot be negative")
            return total


        def format_receipt(lines):
            return "\\n".join(str(line) for line in lines)
        """,
    "app/cli.py": "from app.billing import save_invoice\n\ndef main():\n    save_invoice(-5)\n",
    "docs/invoices.md": "Invoices are saved with save_invoice; a negative total is refused.\n",
}
