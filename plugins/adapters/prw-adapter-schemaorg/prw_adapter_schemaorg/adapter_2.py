"""``pa_schemaorg@2.0.0``: ``@1.1.0``'s rules with a sharper reading of the visible page (README.md lists the
differences, measured with ``prw eval extraction``). A MAJOR version because it changes claims ``@1.1.0`` makes on
some pages (a different buy-box price, or none where ``@1.1.0`` took another product's), as docs/adapter-authors.md
section 5 asks; ``@1.0.0`` and ``@1.1.0`` stay installed and pins keep them:

- the whole page is read (``@1.1.0`` stopped after 20,000 nodes: a cookie dialog listing hundreds of vendors
  could hide the product);
- the product's heading is the first ``<h1>`` a visitor sees, not a hidden one of a dialog;
- a price inside a link to another page (a product card, a recommendation) is not the product's;
- a price labelled per month, per instalment or per unit ("每期 $ 98", "$25/mo", "12,50 € / kg") is not the
  product's;
- prices printed with and without VAT side by side are one price: the first printed is the listing's (the other
  is a diagnostic), where ``@1.1.0`` took neither;
- an ISO code glued to its amount (``EUR110.00``), 元 / 円, and a currency printed in the neighbouring element
  (``<span>294</span><span>元</span>``) count as a printed price;
- bidding ("Place bid", "Fai un'offerta", "Gebot abgeben", ...) and Latvian's "Ielikt grozā" are buy actions,
  and so are controls whose class says ``buy-btn`` / ``btn-buy``.
"""

from __future__ import annotations

from prw_adapter_schemaorg.adapter_1_1 import SchemaOrgAdapterV11
from prw_adapter_schemaorg.visible import V2, Rules


class SchemaOrgAdapterV2(SchemaOrgAdapterV11):
    version = "2.0.0"
    rules: Rules = V2
