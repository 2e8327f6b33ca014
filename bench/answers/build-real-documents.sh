#!/usr/bin/env bash
# Rebuilds bench/answers/real/: the documents of bench/answers/documents as real programs make them (Chromium's print,
# LibreOffice's ODT, DOCX and PDF export, pdfTeX through pandoc, Ghostscript's rewrite, a saved web page, scans, XLSX
# and CSV, PPTX), and the small fixtures of test/fixtures/real/ from their committed sources. The outputs are
# committed: tests and `kbqa eval answers` never need these programs. Run it only to rebuild them, from the checkout's
# root: bash bench/answers/build-real-documents.sh [OUT_DIR] (default bench/answers/real), and
# bash bench/answers/build-real-documents.sh --fixtures (test/fixtures/real/). Each ends with realManifest.ts, which
# writes MANIFEST.json and MANIFEST.md beside the files.
#
# Needs (Debian 12): chromium, libreoffice-writer libreoffice-calc libreoffice-impress, pandoc, texlive-latex-base
# texlive-latex-recommended texlive-fonts-recommended lmodern (pandoc's PDF template, fancyhdr, multicol),
# ghostscript, imagemagick (/usr/bin/convert, ImageMagick 6), poppler-utils (pdftoppm, pdfinfo, pdftotext), zip and
# unzip, and the project's Node 24 (node_modules/.bin/node) for realSources.ts.
# Runs one conversion at a time (the machine is shared). PDFs and zips carry dates and the scans' noise is random,
# so a rebuild differs in bytes; pages, tagging, text and where each layout page begins come out the same.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NODE="$ROOT/node_modules/.bin/node"
CONVERT=/usr/bin/convert # /usr/local/bin/convert may be a stand-in; this script needs the real ImageMagick
VIEWJPEG=$(ls /usr/share/ghostscript/*/lib/viewjpeg.ps | head -n 1)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# A profile of our own, so that a LibreOffice the user has open is not disturbed.
SOFFICE=(soffice "-env:UserInstallation=file://$WORK/lo-profile" --headless)
TAGGED_PDF='pdf:writer_pdf_Export:{"UseTaggedPDF":{"type":"boolean","value":"true"}}'

# chromium_pdf IN.html OUT.pdf: Chromium's print (Skia), tagged, without its own date/URL header and footer.
chromium_pdf() {
  chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer --generate-pdf-document-outline \
    --print-to-pdf="$2" "file://$(realpath "$1")" >/dev/null 2>&1
}

# libreoffice IN OUT_DIR FORMAT [INFILTER]: soffice --convert-to; the output is OUT_DIR/<IN's base name>.<ext>.
libreoffice() {
  local args=("${SOFFICE[@]}")
  if [ -n "${4:-}" ]; then args+=("--infilter=$4"); fi
  "${args[@]}" --convert-to "$3" --outdir "$2" "$1" >/dev/null 2>&1
}

# writer_html_to_office NAME.html DIR: LibreOffice Writer reads its HTML dialect; writes DIR/NAME.odt, NAME.docx
# (Word 2007 XML, from the ODT), NAME.libreoffice.pdf (the ODT exported, tagged) and NAME.docx.pdf (the DOCX
# opened and exported again: the stand-in for Word's "Save as PDF", which tags by default too).
writer_html_to_office() {
  local html=$1 dir=$2 name
  name=$(basename "$html" .html)
  libreoffice "$html" "$dir" odt 'HTML (StarWriter)'
  libreoffice "$dir/$name.odt" "$dir" 'docx:MS Word 2007 XML'
  libreoffice "$dir/$name.odt" "$WORK/lo-pdf" "$TAGGED_PDF"
  mv "$WORK/lo-pdf/$name.pdf" "$dir/$name.libreoffice.pdf"
  libreoffice "$dir/$name.docx" "$WORK/lo-pdf" "$TAGGED_PDF"
  mv "$WORK/lo-pdf/$name.pdf" "$dir/$name.docx.pdf"
}

# pdftex_pdf IN.md OUT.pdf: pandoc's LaTeX through pdfTeX, on Letter pages with 1in margins, 11pt. `-smart` keeps
# the apostrophes as typed (TeX still prints ' as a right quote glyph).
pdftex_pdf() {
  pandoc -f markdown-smart "$1" -o "$2" --pdf-engine=pdflatex -V papersize=letter -V geometry:margin=1in \
    -V fontsize=11pt
}

# ghostscript_pdf IN.pdf OUT.pdf: the file rewritten by Ghostscript's pdfwrite (fonts re-embedded, structure dropped).
ghostscript_pdf() {
  gs -q -dNOPAUSE -dBATCH -dSAFER -sDEVICE=pdfwrite -o "$2" "$1"
}

# scan_pages IN.pdf DIR SEED: each page rasterised at 200 dpi in grey, turned by 0.5–1.5° (a fixed angle per page
# from SEED), given noise and a slight blur, saved as JPEG (quality 55): DIR/page-N.jpg.
scan_pages() {
  local pdf=$1 dir=$2 seed=$3 page angle
  mkdir -p "$dir"
  pdftoppm -r 200 -gray -png "$pdf" "$dir/raw"
  for page in "$dir"/raw-*.png; do
    seed=$(((seed * 1103515245 + 12345) % 2147483648))
    # 0.50 to 1.49 degrees, clockwise or anticlockwise.
    angle=$(awk -v s="$seed" 'BEGIN { m = 0.5 + (s % 100) / 100; printf "%.2f", (int(s / 100) % 2 ? -m : m) }')
    local n=${page##*raw-}
    n=$((10#${n%.png}))
    "$CONVERT" "$page" -background white -rotate "$angle" +repage -gravity center -crop 1700x2200+0+0 +repage \
      -level 0%,100%,0.92 -attenuate 0.5 +noise Gaussian -blur 0x0.6 -colorspace Gray -quality 55 \
      -density 200 -units PixelsPerInch "$dir/page-$n.jpg"
    echo "$n $angle" >>"$dir/angles.txt"
    rm "$page"
  done
}

# bilevel IN OUT [OPTION…]: the scan thresholded to black and white, 1 bit per pixel.
bilevel() {
  local in=$1 out=$2
  shift 2
  "$CONVERT" "$in" -threshold 55% -type bilevel "$@" "$out"
}

# jpegs_to_pdf OUT.pdf JPEG…: the JPEGs as Letter pages of a PDF without any text, by Ghostscript (viewjpeg.ps).
jpegs_to_pdf() {
  local out=$1 program='' jpeg
  shift
  for jpeg in "$@"; do
    program+="<< /PageSize [612 792] >> setpagedevice gsave 612 1700 div 792 2200 div scale ($jpeg) viewJPEG "
    program+='grestore systemdict /showpage get exec '
  done
  gs -q -dNOPAUSE -dBATCH -dNOSAFER -sDEVICE=pdfwrite -o "$out" "$VIEWJPEG" -c '/showpage { } def' -c "$program"
}

# number_slides DECK.pptx: pandoc's slides get the slide-number placeholder (idx 12 of its reference layouts), as
# PowerPoint's "Insert › Slide number" adds it; rezipped with [Content_Types].xml first.
number_slides() {
  local deck=$1 dir="$WORK/pptx" slide n
  rm -rf "$dir" && mkdir -p "$dir" && unzip -q "$deck" -d "$dir"
  for slide in "$dir"/ppt/slides/slide*.xml; do
    n=$(basename "$slide" .xml)
    n=${n#slide}
    sed -i "s#</p:spTree>#<p:sp><p:nvSpPr><p:cNvPr id=\"99\" name=\"Slide Number Placeholder 98\"/><p:cNvSpPr><a:spLocks noGrp=\"1\"/></p:cNvSpPr><p:nvPr><p:ph type=\"sldNum\" sz=\"quarter\" idx=\"12\"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:fld id=\"{C5EF2332-01BF-834F-8236-50238282D533}\" type=\"slidenum\"><a:rPr lang=\"en-GB\"/><a:t>$n</a:t></a:fld><a:endParaRPr lang=\"en-GB\"/></a:p></p:txBody></p:sp></p:spTree>#" "$slide"
  done
  rm "$deck"
  (cd "$dir" && zip -q -X "$deck" '[Content_Types].xml' && zip -q -X -r "$deck" . -x '[Content_Types].xml')
}

# csv_to_xlsx IN.csv DIR: LibreOffice Calc reads the CSV (comma, double quote, UTF-8) and writes DIR/<name>.xlsx;
# the sheet is named after the file.
csv_to_xlsx() {
  libreoffice "$1" "$2" 'xlsx:Calc MS Excel 2007 XML' 'CSV:44,34,76,1'
}

build_benchmark() {
  local out=$1 sources name seed=20261128 names=()
  sources="$out/sources"
  local kinds=(sources chromium-pdf libreoffice pdftex-pdf ghostscript-pdf html scanned sheets pptx)
  # The folders this builds, not the hand-written README.md beside them.
  (cd "$out" 2>/dev/null && rm -rf "${kinds[@]}" MANIFEST.json MANIFEST.md) || true
  for kind in "${kinds[@]}"; do mkdir -p "$out/$kind"; done
  "$NODE" "$ROOT/bench/answers/realSources.ts" "$sources"
  for html in "$sources"/*.print.html; do
    name=$(basename "$html" .print.html)
    echo "[real] $name" >&2
    chromium_pdf "$html" "$out/chromium-pdf/$name.pdf"
    ghostscript_pdf "$out/chromium-pdf/$name.pdf" "$out/ghostscript-pdf/$name.pdf"
    cp "$sources/$name.writer.html" "$WORK/$name.html"
    writer_html_to_office "$WORK/$name.html" "$out/libreoffice"
    pdftex_pdf "$sources/$name.latex.md" "$out/pdftex-pdf/$name.pdf"
    mv "$sources/$name.saved.html" "$out/html/$name.html"
    scan_pages "$out/chromium-pdf/$name.pdf" "$WORK/scan-$name" "$seed"
    seed=$((seed + 1))
    names+=("$name")
    mapfile -t pages < <(ls "$WORK/scan-$name"/page-*.jpg | sort -t- -k2 -n)
    jpegs_to_pdf "$out/scanned/$name.pdf" "${pages[@]}"
  done
  # One scanned page in each image format: the water board handbook's page 3 (the pressure-zone table), in grey as
  # JPEG, and in black and white (a scanner's "B&W" mode) as PNG and as Group 4 TIFF.
  local page3="$WORK/scan-water-board-field-handbook/page-3.jpg"
  cp "$page3" "$out/scanned/water-board-field-handbook-p3.jpg"
  bilevel "$page3" "$out/scanned/water-board-field-handbook-p3.png"
  bilevel "$page3" "$out/scanned/water-board-field-handbook-p3.tiff" -compress Group4
  for name in "${names[@]}"; do
    sed "s/^/$name /" "$WORK/scan-$name/angles.txt"
  done | sort -k1,1 -k2,2n >"$out/scanned/rotation.txt"
  for csv in "$sources"/*.csv; do
    mv "$csv" "$out/sheets/"
    csv_to_xlsx "$out/sheets/$(basename "$csv")" "$out/sheets"
  done
  # Decks: the markdown documents, one slide per section (council services: the permits table on slide 3).
  for md in "$ROOT"/bench/answers/documents/*.md; do
    name=$(basename "$md" .md)
    pandoc -f markdown-smart "$md" -o "$out/pptx/$name.pptx"
    number_slides "$(realpath "$out/pptx/$name.pptx")"
  done
  "$NODE" "$ROOT/bench/answers/realManifest.ts" "$out"
}

build_fixtures() {
  local dir="$ROOT/test/fixtures/real" src
  src="$dir/sources"
  (
    cd "$dir"
    chromium_pdf "$src/chromium-paragraph.html" chromium-paragraph.pdf
    chromium_pdf "$src/table-row.html" table-row.pdf
    chromium_pdf "$src/numbered-list.html" numbered-list.pdf
    chromium_pdf "$src/two-column.html" two-column.pdf
    chromium_pdf "$src/heading-gutter.html" heading-gutter.pdf
    cp "$src/libreoffice-paragraph.html" "$WORK/libreoffice-paragraph.html"
    libreoffice "$WORK/libreoffice-paragraph.html" "$WORK" odt 'HTML (StarWriter)'
    libreoffice "$WORK/libreoffice-paragraph.odt" "$WORK/lo-pdf" "$TAGGED_PDF"
    mv "$WORK/lo-pdf/libreoffice-paragraph.pdf" libreoffice-paragraph.pdf
    cp "$src/office.html" "$WORK/office.html"
    libreoffice "$WORK/office.html" . odt 'HTML (StarWriter)'
    libreoffice office.odt . 'docx:MS Word 2007 XML'
    csv_to_xlsx rows.csv . # rows.csv and page.html are their own sources
    pandoc -f markdown-smart "$src/deck.md" -o deck.pptx
    number_slides "$(realpath deck.pptx)"
    chromium_pdf "$src/scanned.html" "$WORK/scanned-source.pdf"
    scan_pages "$WORK/scanned-source.pdf" "$WORK/scan-fixture" 7
    jpegs_to_pdf scanned.pdf "$WORK/scan-fixture/page-1.jpg"
    bilevel "$WORK/scan-fixture/page-1.jpg" scanned.png
  )
  "$NODE" "$ROOT/bench/answers/realManifest.ts" "$dir"
}

if [ "${1:-}" = --fixtures ]; then
  build_fixtures
else
  build_benchmark "$(realpath -m "${1:-$ROOT/bench/answers/real}")"
fi
