/*
Name: Deep link
Description: A public page in steps: confirm a date of birth, then record interest in a vacancy (?email=…)
Author: WebJobs
Version: 1.0.0
Access: public
Mode: page
*/
// Someone arrives from a link carrying their email, proves who they are with their
// date of birth, and gets a short-lived pass to the next step. There is no
// server-side session, so the pass travels in the form as a token from sign():
// the browser cannot forge it, and it stops working when its time is up.
const PASS_MINUTES = 15
const PURPOSE = "deeplink.choose"

const ENTITIES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }
const esc = (value) => String(value ?? "").replace(/[&<>"']/g, (c) => ENTITIES[c])
// {{x}} goes in HTML-escaped, {{{x}}} as it is (only for HTML this job built itself).
// One pass over the template, so braces inside a value are never expanded again.
const fill = (html, values) => html.replace(/\{\{\{\s*(\w+)\s*\}\}\}|\{\{\s*(\w+)\s*\}\}/g,
  (_, raw, plain) => (raw !== undefined ? String(values[raw] ?? "") : esc(values[plain])))

const rows = await db.exec("SELECT Name, Html FROM WebJobTemplate WHERE Name LIKE 'deeplink.%'")
const templates = Object.fromEntries(rows.map((r) => [r.Name, r.Html]))
function T(name, values = {}) {
  const html = templates[`deeplink.${name}`]
  if (html === undefined) throw new Error(`The template deeplink.${name} is not in WebJobTemplate`)
  return fill(html, values)
}
const page = (title, body) => response.html(T("layout", { title, body }))

const email = String(params.email ?? "").trim()
const step = request.method === "POST" ? String(params.step ?? "") : ""

function start(notice = "") {
  return page("Confirm it is you", T("dob", { email, notice: notice && T("notice", { text: notice }) }))
}

// A date as YYYY-MM-DD: what <input type="date"> sends, or a typed DD/MM/YYYY.
function isoDate(value) {
  const text = String(value ?? "").trim()
  const uk = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(text)
  if (uk) return `${uk[3]}-${uk[2].padStart(2, "0")}-${uk[1].padStart(2, "0")}`
  return /^\d{4}-\d{2}-\d{2}$/.test(text) ? text : ""
}

async function checkDateOfBirth() {
  const dob = isoDate(params.dob)
  const [person] = email && dob
    ? await db.exec("SELECT PersonID, Name, DepartmentID, DateOfBirth FROM Person WHERE lower(Email) = lower(?)", [email])
    : []
  // One answer for an unknown email and a wrong date, so the page cannot be used
  // to find out who is on file.
  if (!person || String(person.DateOfBirth ?? "").slice(0, 10) !== dob) {
    console.info("the details given do not match")
    return start("Those details do not match our records. Check them and try again.")
  }
  const vacancies = await db.exec(
    `SELECT VacancyID, Position, Town, Salary FROM Vacancy
      WHERE DepartmentID = ? AND Status = 'L' ORDER BY WhenCreated DESC LIMIT 5`,
    [person.DepartmentID])
  console.log(`person ${person.PersonID} confirmed; ${vacancies.length} vacancies offered`)
  if (!vacancies.length) return page("No vacancies", T("nothing", { name: person.Name }))
  // The pass names what was offered, so a posted vacancy is checked against it, and
  // what it is for: every job on the hub signs with the same key.
  const offered = vacancies.map((v) => v.VacancyID)
  const token = sign({ for: PURPOSE, person: person.PersonID, offered }, PASS_MINUTES * 60)
  const choices = vacancies.map((v) => T("choice", {
    id: v.VacancyID, position: v.Position, town: v.Town, salary: v.Salary,
  })).join("\n")
  const expires = Math.floor(Date.now() / 1000) + PASS_MINUTES * 60
  return page("Open vacancies", T("choose", { name: person.Name, token, choices, expires, minutes: PASS_MINUTES }))
}

// Why a pass failed, for the message only: the claim is read without trusting it.
function expiredPass(token) {
  try {
    const claim = JSON.parse(Buffer.from(String(token).split(".")[0], "base64url").toString())
    return typeof claim.exp === "number" && claim.exp < Date.now() / 1000
  } catch {
    return false
  }
}

async function recordChoice() {
  const claim = verify(String(params.token ?? ""))
  const pass = claim && claim.for === PURPOSE && Array.isArray(claim.offered) ? claim : null
  if (!pass) {
    const expired = expiredPass(params.token)
    console.info(expired ? "the pass has expired" : "the pass is not valid")
    return start(expired
      ? "Your page has expired. Confirm your details again to continue."
      : "That link could not be checked. Confirm your details again to continue.")
  }
  const vacancy = Number(params.vacancy)
  if (!pass.offered.includes(vacancy)) {
    console.info(`vacancy ${params.vacancy} was not offered to person ${pass.person}`)
    return start("Choose one of the vacancies offered. Confirm your details again to continue.")
  }
  const [person] = await db.exec("SELECT Name FROM Person WHERE PersonID = ?", [pass.person])
  const [chosen] = await db.exec("SELECT Position, Town FROM Vacancy WHERE VacancyID = ?", [vacancy])
  if (!person || !chosen) return start("That choice could not be recorded. Confirm your details again to continue.")
  const known = await db.exec(
    "SELECT 1 AS Seen FROM VacancyInterest WHERE PersonID = ? AND VacancyID = ?", [pass.person, vacancy])
  if (!known.length) {
    await db.exec("INSERT INTO VacancyInterest (PersonID, VacancyID, WhenRecorded) VALUES (?, ?, ?)",
      [pass.person, vacancy, new Date().toISOString()])
  }
  console.log(`interest of person ${pass.person} in vacancy ${vacancy} ${known.length ? "was already" : "is now"} recorded`)
  return page("Thank you", T("done", {
    name: person.Name, position: chosen.Position, town: chosen.Town, again: known.length ? " (already)" : "",
  }))
}

if (step === "dob") return await checkDateOfBirth()
if (step === "choose") return await recordChoice()
console.log(step ? `unknown step '${step}': back to the start` : "landing page")
return start()
