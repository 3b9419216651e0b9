/**
 * What a person sees, measured in the page (the boxes Chromium laid out): the messages an action
 * shows are inside the viewport, an element is on screen once scrolled to, the things a screen shows
 * do not overlap, a fieldset's top border is cut only behind its legend's words.
 */
import type { Locator, Page } from "playwright-core"

/** The messages of the panel: errors, notices, statuses (empty or hidden ones are not shown: skipped). */
export const MESSAGES = ".error, .notice, .notice-line, .status, [role=alert], [role=status]"

/** The words of every message a person could see now (has a size, is not visually hidden), wherever it is. */
export const shownMessages = (page: Page): Promise<Array<string>> =>
  page.evaluate((selector) =>
    [...document.querySelectorAll<HTMLElement>(selector)].filter((el) => {
      const r = el.getBoundingClientRect()
      return r.width > 1 && r.height > 1 && getComputedStyle(el).visibility !== "hidden" && el.closest(".visually-hidden") === null
    }).map((el) => (el.textContent ?? "").trim()).filter((t) => t !== ""), MESSAGES)

/**
 * Every message on the page that a person could see (has a size, is not visually hidden) but that
 * is outside the viewport, as "text (left,top..right,bottom)"; `before`: the words shown before the
 * action, whose messages are not its doing. Empty when every message the action showed is in view.
 */
export const messagesOffScreen = (page: Page, before: ReadonlyArray<string> = []): Promise<Array<string>> =>
  page.evaluate(([selector, earlier]) => {
    const out: Array<string> = []
    for (const el of document.querySelectorAll<HTMLElement>(selector)) {
      const r = el.getBoundingClientRect()
      const style = getComputedStyle(el)
      if (r.width <= 1 || r.height <= 1 || style.visibility === "hidden" || el.closest(".visually-hidden") !== null) continue
      if ((el.textContent ?? "").trim() === "" || earlier.includes((el.textContent ?? "").trim())) continue
      // A pixel's slack: boxes have fractional edges, and one scrolled flush with the viewport's edge ends at 800.4.
      if (r.top < -1 || r.left < -1 || r.bottom > innerHeight + 1 || r.right > innerWidth + 1) {
        out.push(`${(el.textContent ?? "").trim().slice(0, 80)} (${Math.round(r.left)},${Math.round(r.top)}..${Math.round(r.right)},${Math.round(r.bottom)} in ${innerWidth}×${innerHeight})`)
      }
    }
    return out
  }, [MESSAGES, before] as const)

/** The element's box relative to the viewport, after scrolling it into view (as a person would). */
export const boxOnScreen = async (locator: Locator) => {
  await locator.scrollIntoViewIfNeeded()
  return locator.evaluate((el) => {
    const r = el.getBoundingClientRect()
    return {
      inside: r.width > 1 && r.height > 1 && r.left >= -1 && r.top >= -1 && r.right <= innerWidth + 1 && r.bottom <= innerHeight + 1,
      box: [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)]
    }
  })
}

/** The box of a message as it is now (no scrolling): inside the viewport? */
export const inViewNow = (locator: Locator) =>
  locator.evaluate((el) => {
    const r = el.getBoundingClientRect()
    return r.width > 1 && r.height > 1 && r.left >= -1 && r.top >= -1 && r.right <= innerWidth + 1 && r.bottom <= innerHeight + 1
  })

/**
 * Pairs of shown elements of `selector` whose boxes overlap (by more than a pixel), one not inside
 * the other: "a ⟂ b". What a screen shows side by side or one under the other must not cover itself.
 */
export const overlaps = (page: Page, selector: string): Promise<Array<string>> =>
  page.evaluate((sel) => {
    const name = (el: Element) => `${el.tagName.toLowerCase()}${el.id === "" ? "" : `#${el.id}`}${el.className === "" ? "" : `.${String(el.className).split(" ").join(".")}`} “${(el.textContent ?? "").trim().slice(0, 30)}”`
    const shown = [...document.querySelectorAll(sel)].filter((el) => {
      const r = el.getBoundingClientRect()
      return r.width > 1 && r.height > 1 && el.closest(".visually-hidden") === null && getComputedStyle(el).visibility !== "hidden"
    })
    const boxes = shown.map((el) => ({ el, r: el.getBoundingClientRect() }))
    const out: Array<string> = []
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i]!
        const b = boxes[j]!
        if (a.el.contains(b.el) || b.el.contains(a.el)) continue
        const x = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left)
        const y = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top)
        if (x > 1 && y > 1) out.push(`${name(a.el)} ⟂ ${name(b.el)}`)
      }
    }
    return out
  }, selector)

/** What the screens lay out side by side or one under the other: none may cover another. */
export const LAID_OUT = [
  "header.top > *",
  ".crumbs li",
  ".title-row > *",
  "main > p",
  ".card",
  "th",
  "td",
  ".preview-item",
  ".preview-item > *",
  ".form-actions > *",
  ".step-actions > *",
  ".field",
  ".check",
  ".filters > *",
  ".facts > *",
  "legend"
].join(", ")

/**
 * Fieldsets whose top border is hidden beyond their legend's words (a legend stretched across the
 * fieldset cuts the border along its whole width): "legend text: legend w px for words of w px".
 */
export const cutBorders = (page: Page): Promise<Array<string>> =>
  page.evaluate(() => {
    const out: Array<string> = []
    for (const legend of document.querySelectorAll("fieldset > legend")) {
      const box = legend.getBoundingClientRect()
      if (box.width <= 1) continue
      const range = document.createRange()
      range.selectNodeContents(legend)
      const words = range.getBoundingClientRect().width
      const style = getComputedStyle(legend)
      const padding = Number.parseFloat(style.paddingLeft) + Number.parseFloat(style.paddingRight)
      if (box.width > words + padding + 2) out.push(`${(legend.textContent ?? "").trim()}: legend ${Math.round(box.width)} px for words of ${Math.round(words)} px`)
    }
    return out
  })
