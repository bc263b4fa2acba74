/*
Name: Vacancies report
Description: A PDF report of live vacancies per department: a table, one department a page
Author: WebJobs
Version: 1.0.0
*/
const { PDFDocument, StandardFonts, rgb } = require("pdf-lib")
const rows = await db.exec(
  `SELECT d.Name AS Department, v.Position, v.Town, v.Salary
     FROM Vacancy v JOIN Department d ON d.DepartmentID = v.DepartmentID
    WHERE v.Status = 'L' ORDER BY d.Name, v.Position`
)
const pdf = await PDFDocument.create()
const font = await pdf.embedFont(StandardFonts.Helvetica)
const bold = await pdf.embedFont(StandardFonts.HelveticaBold)
const departments = [...new Set(rows.map(r => r.Department))]

for (const department of departments) {          // a page break per department
  const page = pdf.addPage([595, 842])
  let y = 780
  page.drawText(`Live vacancies: ${department}`, { x: 50, y, size: 18, font: bold })
  y -= 32
  const columns = [["Position", 50], ["Town", 260], ["Salary", 420]]
  for (const [title, x] of columns) page.drawText(title, { x, y, size: 11, font: bold })
  y -= 6
  page.drawLine({ start: { x: 50, y }, end: { x: 545, y }, thickness: 0.5, color: rgb(0.6, 0.6, 0.6) })
  y -= 16
  for (const r of rows.filter(r => r.Department === department)) {
    page.drawText(r.Position, { x: 50, y, size: 11, font })
    page.drawText(r.Town, { x: 260, y, size: 11, font })
    page.drawText(`£${Number(r.Salary).toLocaleString("en-GB")}`, { x: 420, y, size: 11, font })
    y -= 18
  }
}
console.log(`report: ${rows.length} vacancies on ${departments.length} pages`)
return response.pdf(await pdf.save({ useObjectStreams: false }), "vacancies.pdf")
