/*
Name: Vacancies export
Description: Every live vacancy as a CSV download
Author: WebJobs
Version: 1.0.0
*/
const rows = await db.exec(
  `SELECT v.VacancyID, d.Name AS Department, v.Position, v.Town, v.Salary, v.WhenCreated
     FROM Vacancy v JOIN Department d ON d.DepartmentID = v.DepartmentID
    WHERE v.Status = 'L' ORDER BY d.Name, v.WhenCreated DESC`
)
const cell = v => {
  const text = v === null || v === undefined ? "" : String(v)
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}
const columns = ["VacancyID", "Department", "Position", "Town", "Salary", "WhenCreated"]
const lines = [columns.join(","), ...rows.map(r => columns.map(c => cell(r[c])).join(","))]
console.log(`exported ${rows.length} vacancies`)
return response.csv(lines.join("\n") + "\n", "vacancies.csv")
