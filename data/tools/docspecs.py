"""Which hand-written source becomes which tenant document file (shared by the tools)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
SOURCES = TOOLS / "sources"
TENANTS = TOOLS.parent / "tenants"

ALPINE = "Alpine Treks SA"
COASTAL = "Coastal Kayak Co."


@dataclass(frozen=True)
class DocSpec:
    """One generated document file; `subject` is the PDF/DOCX subject, or the site for HTML."""

    tenant: str
    source: str
    output: str
    org: str
    subject: str
    created: date


SPECS: tuple[DocSpec, ...] = (
    DocSpec(
        "alpine-treks",
        "terms_2026_v1.md",
        "terms-2026-v1.pdf",
        ALPINE,
        "terms_policy",
        date(2025, 12, 15),
    ),
    DocSpec(
        "alpine-treks",
        "terms_2026_v2.md",
        "terms-2026-v2.pdf",
        ALPINE,
        "terms_policy",
        date(2026, 3, 20),
    ),
    DocSpec(
        "alpine-treks",
        "brochure_2026.md",
        "brochure-2026.pdf",
        ALPINE,
        "marketing",
        date(2025, 11, 28),
    ),
    DocSpec(
        "alpine-treks",
        "patagonia_jun14.md",
        "patagonia-2026-06-14-itinerary.pdf",
        ALPINE,
        "trip_itinerary",
        date(2026, 5, 28),
    ),
    DocSpec(
        "alpine-treks",
        "patagonia_nov08.md",
        "patagonia-2026-11-08-itinerary.docx",
        ALPINE,
        "trip_itinerary",
        date(2026, 10, 19),
    ),
    DocSpec(
        "alpine-treks",
        "medical_policy_v2.md",
        "medical-disclosure-policy-v2.pdf",
        ALPINE,
        "safety_medical",
        date(2025, 10, 14),
    ),
    DocSpec(
        "alpine-treks",
        "guest_faq_v9.md",
        "guest-faq.html",
        ALPINE,
        "alpinetreks.example",
        date(2026, 8, 20),
    ),
    DocSpec(
        "alpine-treks",
        "ebc_itinerary.md",
        "everest-base-camp-2026.txt",
        ALPINE,
        "trip_itinerary",
        date(2025, 9, 1),
    ),
    DocSpec(
        "alpine-treks",
        "packing_list.md",
        "packing-list-2026.md",
        ALPINE,
        "packing_list",
        date(2026, 9, 1),
    ),
    DocSpec(
        "alpine-treks",
        "field_ops_manual.md",
        "field-operations-manual-2026.md",
        ALPINE,
        "operations_internal",
        date(2026, 7, 15),
    ),
    DocSpec(
        "alpine-treks",
        "park_fee_notice_scan.txt",
        "park-fee-notice-2026-scan.pdf",
        ALPINE,
        "operations_internal",
        date(2026, 9, 8),
    ),
    DocSpec(
        "coastal-kayak",
        "terms_2026.md",
        "booking-terms-2026.docx",
        COASTAL,
        "terms_policy",
        date(2026, 1, 10),
    ),
    DocSpec(
        "coastal-kayak",
        "waiver_2026_v2.md",
        "waiver-2026-v2.pdf",
        COASTAL,
        "waiver_release",
        date(2026, 5, 30),
    ),
    DocSpec(
        "coastal-kayak",
        "safety_medical_v4.md",
        "paddling-safety-medical-v4.md",
        COASTAL,
        "safety_medical",
        date(2026, 8, 10),
    ),
    DocSpec(
        "coastal-kayak",
        "johnstone_strait_2026.md",
        "johnstone-strait-orca-expedition.html",
        COASTAL,
        "coastalkayak.example",
        date(2026, 5, 25),
    ),
    DocSpec(
        "coastal-kayak",
        "broken_group_2026.md",
        "broken-group-islands-explorer.txt",
        COASTAL,
        "trip_itinerary",
        date(2026, 7, 2),
    ),
    DocSpec("coastal-kayak", "faq_v4.md", "faq.md", COASTAL, "faq", date(2026, 9, 12)),
    DocSpec(
        "coastal-kayak",
        "packing_list_v2.md",
        "packing-list.txt",
        COASTAL,
        "packing_list",
        date(2025, 12, 1),
    ),
    DocSpec(
        "coastal-kayak",
        "guide_manual.md",
        "guide-operations-manual.md",
        COASTAL,
        "operations_internal",
        date(2025, 4, 2),
    ),
    DocSpec(
        "coastal-kayak",
        "website_2026.md",
        "website-home-2026.html",
        COASTAL,
        "coastalkayak.example",
        date(2026, 10, 5),
    ),
)


def source_path(spec: DocSpec) -> Path:
    return SOURCES / spec.tenant / spec.source
