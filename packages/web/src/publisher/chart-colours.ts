/** Colours for a chart's series (versions, platforms), dark enough against white for text and bars alike (WCAG 3:1 for graphics). */
const PALETTE = ["#1d4ed8", "#b45309", "#047857", "#7c3aed", "#be123c", "#0e7490", "#4d7c0f", "#a21caf"];

/** The colour of the `index`th series, the palette over again after its eighth. */
export const seriesColour = (index: number) => PALETTE[index % PALETTE.length];
