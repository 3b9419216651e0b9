/** The twin's answers in Trello's shapes (the fields Trello's REST reference lists for each object). */
import type { TwinAttachment, TwinCard, TwinLabel, TwinList } from "./State.ts"

export const listJson = (l: TwinList) => ({
  id: l.id,
  name: l.name,
  closed: l.closed,
  color: null,
  idBoard: l.idBoard,
  pos: l.pos,
  subscribed: false,
  softLimit: null,
  type: null,
  datasource: { filter: false }
})

export const labelJson = (l: TwinLabel, uses: number) => ({ id: l.id, idBoard: l.idBoard, name: l.name, color: l.color, uses })

export const attachmentJson = (a: TwinAttachment) => ({
  id: a.id,
  bytes: null,
  date: a.date,
  edgeColor: null,
  idMember: "5f1a0000000000000000e001",
  isUpload: false,
  mimeType: "",
  name: a.name,
  previews: [],
  url: a.url,
  pos: 16384
})

const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 128)

export const cardUrl = (c: Pick<TwinCard, "shortLink" | "idShort" | "name">) => `https://trello.com/c/${c.shortLink}/${c.idShort}-${slug(c.name)}`

export const cardJson = (c: TwinCard, labels: ReadonlyArray<TwinLabel>) => ({
  id: c.id,
  badges: {
    attachments: c.attachments.length,
    comments: 0,
    description: c.desc !== "",
    votes: 0,
    viewingMemberVoted: false,
    subscribed: false,
    checkItems: 0,
    checkItemsChecked: 0,
    due: null,
    dueComplete: false
  },
  checkItemStates: [],
  closed: false,
  dueComplete: false,
  dateLastActivity: c.dateLastActivity,
  desc: c.desc,
  descData: { emoji: {} },
  due: null,
  dueReminder: null,
  email: null,
  idBoard: c.idBoard,
  idChecklists: [],
  idList: c.idList,
  idMembers: [],
  idMembersVoted: [],
  idShort: c.idShort,
  idAttachmentCover: null,
  labels: c.idLabels.flatMap((id) => labels.filter((l) => l.id === id).map((l) => ({ id: l.id, idBoard: l.idBoard, name: l.name, color: l.color }))),
  idLabels: c.idLabels,
  manualCoverAttachment: false,
  name: c.name,
  pos: c.pos,
  shortLink: c.shortLink,
  shortUrl: `https://trello.com/c/${c.shortLink}`,
  start: null,
  subscribed: false,
  url: cardUrl(c),
  attachments: [],
  stickers: [],
  limits: {}
})
