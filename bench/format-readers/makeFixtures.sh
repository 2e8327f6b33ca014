#!/bin/sh
# Builds the measurement fixtures into ./out/ from bench/answers/documents/*.md (Debian's pandoc, LibreOffice,
# Chromium, poppler-utils and ImageMagick: apt-get install pandoc libreoffice-writer libreoffice-calc
# libreoffice-impress chromium poppler-utils imagemagick --no-install-recommends).
#   out/fixtures: small.{md,docx,odt,html,pptx} (pandoc), large.* (the small text x300, ~1 MB of text),
#                 deck500.pptx (500 slides), varieties.csv (2,000 rows), page.html (an article with nav, sidebar,
#                 cookie banner, footer, scripts), lo/ (LibreOffice's own DOCX, ODT, XLSX, PPTX of the same)
#   out/ocr:      scan-N.png (Chromium's print of small.html at 300 dpi, grey, rotated 1.3°, noise, blur) and
#                 hard-N.png (200 dpi, rotated -2.4°, stronger noise), truth.txt (pdftotext of the print)
# Usage: sh makeFixtures.sh /path/to/kbqa
set -eu
REPO=${1:?path to the kbqa checkout}
HERE=$(cd "$(dirname "$0")" && pwd)
F=$HERE/out/fixtures O=$HERE/out/ocr
mkdir -p "$F/lo" "$O"
cd "$F"
for f in "$REPO"/bench/answers/documents/*.md; do cat "$f"; printf '\n\n'; done > small.md
cat >> small.md <<'MD'
## Opening steps

1. Unlock the front gate with the brass key.
2. Switch on the hall lights at the panel behind the desk.
3. Set the boiler to 19 degrees before the first class.

- Towels are sold at reception.
- Lockers take a one-pound coin.
MD
python3 - <<'PY'
import csv, random
src = open('small.md').read()
open('large.md', 'w').write('\n\n'.join(src.replace('# ', '# Part %d: ' % i, 1) for i in range(300)))
s = ['---\ntitle: Deck of 500\n---\n']
for i in range(1, 501):
    s.append('## Slide %d heading\n\n- Point one of slide %d\n- Point two: the depot opens at %02d:00\n\nA paragraph for slide %d.\n' % (i, i, i % 24, i))
open('deck500.md', 'w').write('\n'.join(s))
random.seed(1)
w = csv.writer(open('varieties.csv', 'w', newline=''))
w.writerow(['Variety', 'Harvest month', 'Tonnage', 'Storage (°C)'])
for i in range(2000):
    w.writerow(['Variety %d' % i, random.choice(['August', 'September', 'October']), random.randint(50, 900), random.choice([2, 3, 4])])
PY
for n in small large; do
  pandoc $n.md -o $n.docx; pandoc $n.md -o $n.odt; pandoc $n.md -s --metadata title=$n -o $n.html
done
pandoc small.md -o small.pptx --slide-level=2
pandoc deck500.md -o deck500.pptx --slide-level=2
LO="soffice -env:UserInstallation=file://$HERE/out/lo-profile --headless"
$LO --convert-to 'docx:MS Word 2007 XML' --outdir lo small.odt
$LO --convert-to odt --outdir lo small.docx
$LO --convert-to xlsx --outdir lo varieties.csv
$LO --convert-to pptx --outdir lo small.pptx
cp "$HERE/page.html" page.html
cd "$O"
chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer --print-to-pdf=scan-src.pdf "file://$F/small.html"
pdftotext scan-src.pdf truth.txt
pdftoppm -r 300 -gray -png scan-src.pdf clean
for f in clean-*.png; do convert "$f" -background white -rotate 1.3 -attenuate 0.6 +noise Gaussian -blur 0x0.6 -colorspace Gray -depth 8 "scan-${f#clean-}"; done
pdftoppm -r 200 -gray -png scan-src.pdf c200
for f in c200-*.png; do convert "$f" -background white -rotate -2.4 -attenuate 1.5 +noise Gaussian -blur 0x0.8 -colorspace Gray -depth 8 "hard-${f#c200-}"; done
